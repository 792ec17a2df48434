#include "genie/net/completion_queue.h"

#include <spdlog/spdlog.h>

namespace genie::net {

void CompletionQueue::Complete(const Completion& done) {
  done_.push_back(done);
  PostDrain();
}

void CompletionQueue::ReportFatal(Status status) {
  if (!first_fatal_seen_) {
    spdlog::error("{}", status.message());
    first_fatal_ = status;
  }
  first_fatal_seen_ = true;
  fatal_.push_back(std::move(status));
  PostDrain();
}

void CompletionQueue::PostDrain() {
  if (drain_posted_) return;
  drain_posted_ = true;
  loop_->Post([this, alive = alive_] {
    if (*alive) Drain();
  });
}

void CompletionQueue::Drain() {
  drain_posted_ = false;
  draining_.swap(done_);
  std::vector<Status> fatal;
  fatal.swap(fatal_);
  if (events_ != nullptr) {
    for (const Completion& d : draining_) {
      switch (d.type) {
        case Completion::kSend:
          events_->OnSendDone(d.cookie);
          break;
        case Completion::kRecv:
          events_->OnRecvDone(d.cookie, d.bytes, d.offset);
          break;
        case Completion::kWrite:
          events_->OnWriteDone(d.cookie);
          break;
        case Completion::kRemoteWrite:
          events_->OnRemoteWrite(d.peer, d.channel, d.cookie, d.offset, d.bytes, d.imm);
          break;
      }
    }
    for (const Status& s : fatal) events_->OnFatal(s);
  }
  draining_.clear();
}

}  // namespace genie::net
