// Clock: where "now" comes from, replaceable the way LevelDB's Env replaces the OS. Real runs
// use MonotonicClock (CLOCK_MONOTONIC, the one clock of real runs); tests use a ManualClock,
// which moves only when the test advances it, so that timeouts and heartbeats are tested by
// arithmetic instead of sleeping on a busy machine.
//
// Ownership: a clock is borrowed by whoever reads it and must outlive them; MonotonicClock's
// Default() is a process-wide instance that is never destroyed. Threading: Now() may be called
// from any thread; ManualClock's Advance/Set too (the time is one atomic).
#pragma once

#include <atomic>

#include "genie/common/units.h"
#include "genie/loop/precise_sleep.h"

namespace genie::loop {

class Clock {
 public:
  virtual ~Clock() = default;
  // Nanoseconds on a clock that never goes backwards.
  virtual TimeNs Now() const = 0;
};

class MonotonicClock final : public Clock {
 public:
  TimeNs Now() const override { return MonotonicNow(); }
  // The shared instance real code uses when no clock is injected.
  static const Clock* Default();
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeNs start = 0) : now_(start) {}
  TimeNs Now() const override { return now_.load(std::memory_order_acquire); }
  // Moves time forward by `d` (d >= 0: a clock that goes back breaks every reader).
  void Advance(TimeNs d) { now_.fetch_add(d < 0 ? 0 : d, std::memory_order_acq_rel); }

 private:
  std::atomic<TimeNs> now_;
};

}  // namespace genie::loop
