// EventQueue: the simulator's virtual clock. Events are callbacks due at an integer nanosecond;
// they run in time order and, at equal times, in the order they were scheduled — the same
// tie-break as ASTRA-sim's analytical event queue, so runs are deterministic and comparable.
// An event may schedule more events, also at the current time (they run after every event
// already due now). Owned by SimBackend; single-threaded (the thread that calls Run()).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "genie/common/units.h"

namespace genie::sim {

class EventQueue {
 public:
  using Fn = std::function<void()>;

  TimeNs Now() const { return now_; }
  // Schedules `fn` at absolute time `when` (>= Now()).
  void At(TimeNs when, Fn fn);
  // Schedules `fn` `delay` (>= 0) ns from now.
  void After(TimeNs delay, Fn fn) { At(now_ + delay, std::move(fn)); }
  // Runs the earliest event; false when none is left.
  bool RunOne();
  // Runs events until none is left; returns how many ran.
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
};

}  // namespace genie::sim
