// EventQueue: the simulator's virtual clock. Events are callbacks due at an integer nanosecond;
// they run in time order and, at equal times, in the order they were scheduled — the same
// tie-break as ASTRA-sim's analytical event queue, so runs are deterministic and comparable.
// An event may schedule more events, also at the current time (they run after every event
// already due now).
// Time is int64 ns: an event that would land at or past kMaxTimeNs (about 292 years; reached by
// extreme inputs such as a 1e-300 GB/s link) is not scheduled. The queue then fails: it keeps
// the first error (status()), runs no more events, and its owner reports the error instead of
// a wrapped, negative clock. Models that know which input overflowed call Fail() themselves
// with a message naming it.
// Owned by SimBackend; single-threaded (the thread that calls Run()).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::sim {

class EventQueue {
 public:
  using Fn = std::function<void()>;

  TimeNs Now() const { return now_; }
  // Schedules `fn` at absolute time `when` (>= Now()).
  void At(TimeNs when, Fn fn);
  // Schedules `fn` `delay` (>= 0) ns from now; past the end of time, fails the queue instead.
  void After(TimeNs delay, Fn fn);
  // True when `delay` ns from now is still a representable time (below kMaxTimeNs).
  bool Fits(TimeNs delay) const;
  // Stops the simulation with `status` (not OK): the first failure is kept, the pending events
  // are dropped and no further event runs or is scheduled.
  void Fail(Status status);
  bool failed() const { return !status_.ok(); }
  const Status& status() const { return status_; }
  // Runs the earliest event; false when none is left or the queue has failed.
  bool RunOne();
  // Runs events until none is left or the queue fails; returns how many ran.
  uint64_t Run();

  bool empty() const { return heap_.empty(); }
  size_t pending() const { return heap_.size(); }
  uint64_t executed() const { return executed_; }

 private:
  // The heap holds small entries; the callbacks stay put in `fns_` (heap moves are cheap).
  struct Entry {
    TimeNs when;
    uint64_t seq;  // insertion order: the tie-break at equal times
    uint32_t fn;   // index into fns_
  };
  // std heap algorithms build a max-heap: "later" puts the earliest event on top.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.when != b.when ? a.when > b.when : a.seq > b.seq;
    }
  };

  TimeNs now_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  std::vector<Entry> heap_;
  std::vector<Fn> fns_;
  std::vector<uint32_t> free_fns_;
  Status status_;
};

}  // namespace genie::sim
