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
//
// Layout (a simulation of thousands of ranks runs millions of events, most of them at a few
// timestamps): an event is a 16-byte record (a Handler and a 64-bit argument; a std::function
// event is a record pointing at its slot). Events due at one time sit in one FIFO bucket in the
// order they were scheduled; a heap orders the distinct future times only. Scheduling at the
// current time, or at a future time scheduled of late (a small direct-mapped cache of them), is
// an append with no heap or hash operation (the congestion-aware model schedules each hop's
// arrival and link release at times other ranks of the same round schedule too: the hash's
// lookup, a division, was ~10 % of its instructions).
// Owned by SimBackend; single-threaded (the thread that calls Run()).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"
#include "genie/common/event_handler.h"
#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::sim {

class EventQueue {
 public:
  using Fn = std::function<void()>;
  // Receives events scheduled with a 64-bit argument: no closure, no allocation. Must outlive
  // its pending events (owners live as long as the queue's run).
  using Handler = EventHandler;

  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  TimeNs Now() const { return now_; }
  // Schedules `fn` at absolute time `when` (>= Now()).
  void At(TimeNs when, Fn fn);
  void At(TimeNs when, Handler* handler, uint64_t arg);
  // Schedules `fn` `delay` (>= 0) ns from now; past the end of time, fails the queue instead.
  void After(TimeNs delay, Fn fn);
  void After(TimeNs delay, Handler* handler, uint64_t arg);
  // Keeps `fn` and returns the (handler, arg) that runs it once, when scheduled: for code that
  // passes pairs along (NetworkModel::TransmitTo) but was given a closure.
  std::pair<Handler*, uint64_t> Hold(Fn fn);
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
  // The same, at most `max_events` of them (a caller reporting progress between batches).
  uint64_t RunFor(uint64_t max_events);

  bool empty() const { return pending_ == 0; }
  size_t pending() const { return pending_; }
  uint64_t executed() const { return executed_; }

 private:
  struct Event {
    Handler* handler;
    uint64_t arg;
  };
  static_assert(sizeof(Event) == 16);
  struct Bucket {
    std::vector<Event> events;
    size_t head = 0;  // next to run (the current bucket only)
  };
  // A distinct future time and its bucket; the heap puts the earliest on top.
  struct Due {
    TimeNs when;
    uint32_t bucket;
  };
  struct Later {
    bool operator()(const Due& a, const Due& b) const { return a.when > b.when; }
  };
  // Runs std::function events: arg is the slot in fns_.
  class FnHandler final : public Handler {
   public:
    explicit FnHandler(EventQueue* q) : q_(q) {}
    void OnEvent(uint64_t slot) override;

   private:
    EventQueue* q_;
  };

  bool Validate(TimeNs when);
  bool Step();        // RunOne
  bool NextBucket();  // moves to the next time due; false when none is left
  void Push(TimeNs when, Event ev);
  // Push's slow path: a time other than now and the recent ones.
  void PushLater(TimeNs when, Event ev);
  uint32_t NewBucket();
  void FailPastEnd();               // an event due at kMaxTimeNs
  void FailOverflow(TimeNs delay);  // an event `delay` ns from now past the end of time
  // After's checks and failures (a negative delay, past the end of time, a failed queue).
  void AfterChecked(TimeNs delay, Handler* handler, uint64_t arg);

  TimeNs now_ = 0;
  uint64_t executed_ = 0;
  size_t pending_ = 0;
  // buckets_[current_] holds the events due at now_.
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  uint32_t current_ = 0;
  std::vector<Due> heap_;
  std::unordered_map<TimeNs, uint32_t> bucket_at_;  // future time -> bucket
  // Future times recently scheduled and their buckets (when = -1: empty); an entry goes when its
  // time becomes now (NextBucket), so a hit is always a pending bucket.
  struct Recent {
    TimeNs when = -1;
    uint32_t bucket = 0;
  };
  static constexpr int kRecentBits = 6;
  static size_t RecentSlot(TimeNs when) {
    return static_cast<size_t>((static_cast<uint64_t>(when) * 0x9e3779b97f4a7c15ULL) >>
                               (64 - kRecentBits));
  }
  std::array<Recent, size_t{1} << kRecentBits> recent_{};
  FnHandler fn_handler_{this};
  std::vector<Fn> fns_;
  std::vector<uint32_t> free_fns_;
  Status status_;
};

// The per-event paths, inline: a simulation schedules a few events per message.
inline bool EventQueue::Fits(TimeNs delay) const {
  TimeNs when;
  return !__builtin_add_overflow(now_, delay, &when) && when < kMaxTimeNs;
}

inline bool EventQueue::Validate(TimeNs when) {
  GENIE_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
  if (failed()) return false;
  if (when == kMaxTimeNs) {
    FailPastEnd();
    return false;
  }
  return true;
}

[[gnu::always_inline]] inline void EventQueue::Push(TimeNs when, Event ev) {
  ++pending_;
  if (when == now_) {  // after every event already due now: the end of the current bucket
    buckets_[current_].events.push_back(ev);
  } else if (const Recent& recent = recent_[RecentSlot(when)]; recent.when == when) {
    buckets_[recent.bucket].events.push_back(ev);
  } else {
    PushLater(when, ev);
  }
}

inline void EventQueue::At(TimeNs when, Handler* handler, uint64_t arg) {
  if (!Validate(when)) return;
  Push(when, Event{handler, arg});
}

// The common case (a delay that fits, a queue that has not failed) pushes at once; the checks'
// reports and failures are AfterChecked's, out of line. Always inline: with the checks in its
// body the compiler kept it a call, three per message (issue 16, part 8).
[[gnu::always_inline]] inline void EventQueue::After(TimeNs delay, Handler* handler,
                                                   uint64_t arg) {
  TimeNs when;
  if (__builtin_expect(delay >= 0 && !__builtin_add_overflow(now_, delay, &when) &&
                           when < kMaxTimeNs && !failed(),
                       1)) {
    Push(when, Event{handler, arg});
    return;
  }
  AfterChecked(delay, handler, arg);
}

}  // namespace genie::sim
