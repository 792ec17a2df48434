#include "genie/sim/event_queue.h"

#include <algorithm>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::sim {

void EventQueue::At(TimeNs when, Fn fn) {
  GENIE_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
  if (failed()) return;
  if (when == kMaxTimeNs) {
    Fail(Status::InvalidArgument(
        "simulated time overflows: an event is due at or past 2^63-1 ns (about 292 years); an "
        "input (bandwidth, latency, size or duration) is out of range"));
    return;
  }
  uint32_t slot;
  if (free_fns_.empty()) {
    slot = static_cast<uint32_t>(fns_.size());
    fns_.push_back(std::move(fn));
  } else {
    slot = free_fns_.back();
    free_fns_.pop_back();
    fns_[slot] = std::move(fn);
  }
  heap_.push_back(Entry{when, next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later());
}

bool EventQueue::Fits(TimeNs delay) const {
  auto when = CheckedAdd(now_, delay);
  return when.has_value() && *when < kMaxTimeNs;
}

void EventQueue::After(TimeNs delay, Fn fn) {
  GENIE_CHECK(delay >= 0) << "event scheduled with a negative delay " << delay;
  if (!Fits(delay)) {
    Fail(Status::InvalidArgument(
        "simulated time overflows: an event " + std::to_string(delay) + " ns after t=" +
        std::to_string(now_) + " ns lies past 2^63-1 ns (about 292 years); an input "
        "(bandwidth, latency, size or duration) is out of range"));
    return;
  }
  At(now_ + delay, std::move(fn));
}

void EventQueue::Fail(Status status) {
  GENIE_CHECK(!status.ok()) << "EventQueue::Fail with an OK status";
  if (failed()) return;
  status_ = std::move(status);
  heap_.clear();  // the callbacks may hold the only references to state: release them now
  fns_.clear();
  free_fns_.clear();
}

bool EventQueue::RunOne() {
  if (heap_.empty() || failed()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later());
  Entry ev = heap_.back();
  heap_.pop_back();
  Fn fn = std::move(fns_[ev.fn]);
  fns_[ev.fn] = nullptr;
  free_fns_.push_back(ev.fn);
  now_ = ev.when;
  ++executed_;
  fn();
  return true;
}

uint64_t EventQueue::Run() {
  uint64_t n = 0;
  while (RunOne()) ++n;
  return n;
}

}  // namespace genie::sim
