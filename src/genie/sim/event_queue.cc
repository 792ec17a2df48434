#include "genie/sim/event_queue.h"

#include <algorithm>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::sim {

EventQueue::EventQueue() { buckets_.emplace_back(); }

void EventQueue::FailPastEnd() {
  Fail(Status::InvalidArgument(
      "simulated time overflows: an event is due at or past 2^63-1 ns (about 292 years); an "
      "input (bandwidth, latency, size or duration) is out of range"));
}

void EventQueue::FailOverflow(TimeNs delay) {
  Fail(Status::InvalidArgument("simulated time overflows: an event " + std::to_string(delay) +
                               " ns after t=" + std::to_string(now_) +
                               " ns lies past 2^63-1 ns (about 292 years); an input "
                               "(bandwidth, latency, size or duration) is out of range"));
}

std::pair<EventQueue::Handler*, uint64_t> EventQueue::Hold(Fn fn) {
  uint32_t slot;
  if (free_fns_.empty()) {
    slot = static_cast<uint32_t>(fns_.size());
    fns_.push_back(std::move(fn));
  } else {
    slot = free_fns_.back();
    free_fns_.pop_back();
    fns_[slot] = std::move(fn);
  }
  return {&fn_handler_, slot};
}

void EventQueue::At(TimeNs when, Fn fn) {
  if (!Validate(when)) return;
  auto [handler, slot] = Hold(std::move(fn));
  Push(when, Event{handler, slot});
}

uint32_t EventQueue::NewBucket() {
  if (!free_buckets_.empty()) {
    const uint32_t b = free_buckets_.back();
    free_buckets_.pop_back();
    return b;
  }
  buckets_.emplace_back();
  return static_cast<uint32_t>(buckets_.size() - 1);
}

void EventQueue::PushLater(TimeNs when, Event ev) {
  auto [it, inserted] = bucket_at_.try_emplace(when, 0);
  if (inserted) {
    it->second = NewBucket();
    heap_.push_back(Due{when, it->second});
    std::push_heap(heap_.begin(), heap_.end(), Later());
  }
  recent_[RecentSlot(when)] = Recent{when, it->second};
  buckets_[it->second].events.push_back(ev);
}

void EventQueue::AfterChecked(TimeNs delay, Handler* handler, uint64_t arg) {
  GENIE_CHECK(delay >= 0) << "event scheduled with a negative delay " << delay;
  if (!Fits(delay)) {
    FailOverflow(delay);
    return;
  }
  At(now_ + delay, handler, arg);
}

void EventQueue::After(TimeNs delay, Fn fn) {
  GENIE_CHECK(delay >= 0) << "event scheduled with a negative delay " << delay;
  if (!Fits(delay)) {
    FailOverflow(delay);
    return;
  }
  At(now_ + delay, std::move(fn));
}

void EventQueue::Fail(Status status) {
  GENIE_CHECK(!status.ok()) << "EventQueue::Fail with an OK status";
  if (failed()) return;
  status_ = std::move(status);
  // The callbacks may hold the only references to state: release them now.
  for (Bucket& b : buckets_) {
    b.events.clear();
    b.head = 0;
  }
  heap_.clear();
  bucket_at_.clear();
  std::fill(recent_.begin(), recent_.end(), Recent{});
  pending_ = 0;
  fns_.clear();
  free_fns_.clear();
}

void EventQueue::FnHandler::OnEvent(uint64_t slot) {
  // A closure held (Hold) and invoked directly after the queue failed: Fail dropped it.
  if (slot >= q_->fns_.size() || !q_->fns_[slot]) return;
  Fn fn = std::move(q_->fns_[slot]);
  q_->fns_[slot] = nullptr;
  q_->free_fns_.push_back(static_cast<uint32_t>(slot));
  fn();
}

// The next bucket due, once the current one has run out; false when none is left.
bool EventQueue::NextBucket() {
  if (heap_.empty()) return false;
  Bucket& done = buckets_[current_];
  done.events.clear();
  done.head = 0;
  free_buckets_.push_back(current_);
  std::pop_heap(heap_.begin(), heap_.end(), Later());
  const Due next = heap_.back();
  heap_.pop_back();
  bucket_at_.erase(next.when);
  Recent& recent = recent_[RecentSlot(next.when)];
  if (recent.when == next.when) recent.when = -1;
  current_ = next.bucket;
  now_ = next.when;
  return true;
}

// RunOne's body, inlined into Run's loop too: a run executes millions of events.
inline bool EventQueue::Step() {
  if (failed()) return false;
  Bucket* b = &buckets_[current_];
  if (b->head == b->events.size()) {
    if (!NextBucket()) return false;
    b = &buckets_[current_];
  } else if (b->head >= 4096 && b->head * 2 >= b->events.size()) {
    // A long cascade at one time: drop what has run so that the bucket stays bounded.
    b->events.erase(b->events.begin(), b->events.begin() + static_cast<std::ptrdiff_t>(b->head));
    b->head = 0;
  }
  const Event ev = b->events[b->head++];
  --pending_;
  ++executed_;
  ev.handler->OnEvent(ev.arg);
  return true;
}

bool EventQueue::RunOne() { return Step(); }

uint64_t EventQueue::Run() {
  uint64_t n = 0;
  while (Step()) ++n;
  return n;
}

uint64_t EventQueue::RunFor(uint64_t max_events) {
  uint64_t n = 0;
  while (n < max_events && Step()) ++n;
  return n;
}

}  // namespace genie::sim
