#include "genie/loop/clock.h"

namespace genie::loop {

const Clock* MonotonicClock::Default() {
  static const MonotonicClock* const kClock = new MonotonicClock();  // never destroyed
  return kClock;
}

}  // namespace genie::loop
