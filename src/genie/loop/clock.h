// The names of the clock before it moved into env::Env (env/env.h): Clock is an Env (its Now()
// is the monotonic clock), ManualClock a ManualEnv, MonotonicClock::Default() the real Env.
// They remain only for the transports (net/liveness, tcp/, fabric/), which are being reworked
// at the same time; new code takes an env::Env. Delete this file once nothing includes it.
#pragma once

#include "genie/env/env.h"
#include "genie/env/manual_env.h"

namespace genie::loop {

using Clock = env::Env;
using ManualClock = env::ManualEnv;

struct MonotonicClock {
  static const env::Env* Default() { return env::Env::Default(); }
};

}  // namespace genie::loop
