// Precise sleep: waiting until an absolute CLOCK_MONOTONIC deadline with sub-microsecond
// median error, which is what turns a trace's compute durations into faithful gaps between
// network operations. The recipe: timer slack 1 ns (PR_SET_TIMERSLACK), block until
// (deadline - margin), then spin the remaining margin. Spinning burns a core, so it is allowed
// only when the caller says so (SleepPolicy::spin) — by default when the ranks on this machine
// fit on its cores, so that spinning never starves other ranks or the kernel's network stack.
//
// Pure functions and a value type; any thread. The EventLoop uses the same policy for its timers.
#pragma once

#include "genie/common/units.h"
#include "genie/common/usable_cores.h"

namespace genie::loop {

// How a sleep ends: block until deadline - margin, then spin (spin == true), or block to the
// deadline itself (spin == false; error is then the kernel's wake-up latency, ~50 µs).
struct SleepPolicy {
  bool spin = true;
  TimeNs margin = 200 * kNsPerUs;  // REFERENCE.md §4: 200 µs gives p50 ≈ 0.1 µs on this VM
};

// CLOCK_MONOTONIC in ns; the one clock of real runs.
TimeNs MonotonicNow();

// Sets this thread's timer slack to 1 ns (default 50 µs makes every timer late by up to that).
// Returns false if the kernel refused (then sleeps are merely less precise).
bool SetMinimalTimerSlack();

// CPUs this process may run on (common/usable_cores.h).
using genie::UsableCores;

// The default policy: spin only when local_ranks <= UsableCores(); spin_us > 0 overrides the
// margin, spin_us == 0 keeps the default, spin_us < 0 disables spinning.
SleepPolicy DefaultSleepPolicy(int local_ranks, int spin_us = 0);

// Blocks the calling thread until MonotonicNow() >= deadline. Returns immediately if the
// deadline has passed. Call SetMinimalTimerSlack() once per thread first for precision.
void SleepUntil(TimeNs deadline, const SleepPolicy& policy);

}  // namespace genie::loop
