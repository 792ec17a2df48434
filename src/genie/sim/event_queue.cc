#include "genie/sim/event_queue.h"

#include <algorithm>

#include "genie/common/check.h"

namespace genie::sim {

void EventQueue::At(TimeNs when, Fn fn) {
  GENIE_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
  heap_.push_back(Event{when, next_seq_++, std::move(fn)});
  std::push_heap(heap_.begin(), heap_.end(), Later);
}

bool EventQueue::RunOne() {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), Later);
  Event ev = std::move(heap_.back());
  heap_.pop_back();
  now_ = ev.when;
  ++executed_;
  ev.fn();
  return true;
}

uint64_t EventQueue::Run() {
  uint64_t n = 0;
  while (RunOne()) ++n;
  return n;
}

}  // namespace genie::sim
