#include "genie/sim/event_queue.h"

#include <algorithm>

#include "genie/common/check.h"

namespace genie::sim {

void EventQueue::At(TimeNs when, Fn fn) {
  GENIE_CHECK(when >= now_) << "event scheduled in the past: " << when << " < now " << now_;
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

bool EventQueue::RunOne() {
  if (heap_.empty()) return false;
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
