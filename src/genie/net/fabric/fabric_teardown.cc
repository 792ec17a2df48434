// FabricTransport: liveness (heartbeats and silent peers, through PeerLiveness on a timerfd
// tick), lost peers, delivering completions and errors from the loop, and the two ends:
// Shutdown (goodbyes, a final barrier) and Abort (the reason told to every peer).
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"
#include "genie/net/frame.h"

namespace genie::net {

using namespace fabric_internal;

Status FabricTransport::StartHeartbeats() {
  if (options_.world_size < 2 || options_.peer_timeout <= 0 || tick_fd_ >= 0) {
    return Status::Ok();
  }
  const TimeNs interval = liveness_.interval();
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) return Status::IoError(fmt::format("timerfd_create: {}", strerror(errno)));
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(interval / kNsPerSec);
  its.it_value.tv_nsec = static_cast<long>(interval % kNsPerSec);
  its.it_interval = its.it_value;
  Status st = Status::Ok();
  if (timerfd_settime(fd, 0, &its, nullptr) != 0) {
    st = Status::IoError(fmt::format("timerfd_settime: {}", strerror(errno)));
  }
  if (st.ok()) st = loop_->AddFd(fd, EPOLLIN, [this](uint32_t) { OnHeartbeatTick(); });
  if (!st.ok()) {
    close(fd);
    return st;
  }
  tick_fd_ = fd;
  liveness_.StartTicking();
  return Status::Ok();
}

void FabricTransport::StopHeartbeats() {
  liveness_.StopChecking();
  if (tick_fd_ < 0) return;
  loop_->RemoveFd(tick_fd_);
  close(tick_fd_);
  tick_fd_ = -1;
}

void FabricTransport::OnHeartbeatTick() {
  uint64_t expirations = 0;
  if (read(tick_fd_, &expirations, sizeof(expirations)) < 0) return;  // spurious wake-up
  PeerLiveness::TickActions actions;
  actions.link = [this](int p) {
    const size_t pi = static_cast<size_t>(p);
    PeerLiveness::Link link;
    link.open = ep_ != nullptr && !lost_[pi];
    link.excused = bye_from_[pi] != 0;
    // Heartbeats queued behind a full provider queue would tell nothing new.
    link.can_heartbeat = backlog_.empty() && !shutting_down_;
    return link;
  };
  actions.send_heartbeat = [this](int p) { SendSimpleCtrl(p, kHeartbeat, nullptr, 0); };
  actions.silent = [this](int p, TimeNs silent) {
    lost_[static_cast<size_t>(p)] = 1;
    counters_[static_cast<size_t>(p)].connections = 0;
    ReportFatal(Status::Unavailable(fmt::format(
        "rank {}: rank {} ({}) has not been heard from for {} (--peer-timeout {}): it stopped, "
        "hung or its link is down",
        options_.rank, p, AddrName(p), FormatDuration(silent),
        FormatDuration(options_.peer_timeout))));
  };
  liveness_.Tick(actions);
}

void FabricTransport::PeerLost(int peer, const std::string& why) {
  if (peer < 0 || peer >= options_.world_size) {
    ReportFatal(Status::IoError(fmt::format("rank {}: {}", options_.rank, why)));
    return;
  }
  const size_t pi = static_cast<size_t>(peer);
  if (lost_[pi]) return;  // reported once is enough
  lost_[pi] = 1;
  liveness_.Done(peer);
  counters_[pi].connections = 0;
  ReportFatal(Status::Unavailable(
      fmt::format("rank {} lost rank {} ({}, fabric '{}'): {} (peer exited or crashed?)",
                  options_.rank, peer, AddrName(peer), provider_, why)));
}

void FabricTransport::Complete(const Completion& done) {
  done_.push_back(done);
  if (!drain_posted_) {
    drain_posted_ = true;
    std::weak_ptr<bool> alive = alive_;
    loop_->Post([this, alive] {
      if (!alive.expired() && *alive.lock()) DrainCompletions();
    });
  }
}

void FabricTransport::ReportFatal(Status status) {
  if (!first_fatal_seen_) {
    spdlog::error("{}", status.message());
    first_fatal_ = status;
  }
  first_fatal_seen_ = true;
  fatal_.push_back(std::move(status));
  if (!drain_posted_) {
    drain_posted_ = true;
    std::weak_ptr<bool> alive = alive_;
    loop_->Post([this, alive] {
      if (!alive.expired() && *alive.lock()) DrainCompletions();
    });
  }
}

void FabricTransport::DrainCompletions() {
  drain_posted_ = false;
  draining_.swap(done_);
  std::vector<Status> fatal;
  fatal.swap(fatal_);
  if (events_ != nullptr) {
    for (const Completion& d : draining_) {
      switch (d.type) {
        case Done::kSend:
          events_->OnSendDone(d.cookie);
          break;
        case Done::kRecv:
          events_->OnRecvDone(d.cookie, d.bytes, d.offset);
          break;
        case Done::kWrite:
          events_->OnWriteDone(d.cookie);
          break;
        case Done::kRemoteWrite:
          events_->OnRemoteWrite(d.peer, d.channel, d.cookie, d.offset, d.bytes, d.imm);
          break;
      }
    }
    for (const Status& s : fatal) events_->OnFatal(s);
  }
  draining_.clear();
}

Status FabricTransport::Shutdown(TimeNs timeout) {
  if (ep_ == nullptr) return Status::Ok();
  shutting_down_ = true;
  StopHeartbeats();
  for (int p : peers_) {
    if (!lost_[static_cast<size_t>(p)]) SendSimpleCtrl(p, kBye, nullptr, 0);
  }
  auto waiting = [&] {
    if (sends_in_flight_ > 0 || !backlog_.empty()) return true;
    for (int p : peers_) {
      const size_t pi = static_cast<size_t>(p);
      if (!lost_[pi] && !bye_from_[pi]) return true;
    }
    return false;
  };
  const TimeNs deadline = loop_->Now() + timeout;
  const bool had_fatal = first_fatal_seen_;
  while (waiting() && loop_->Now() < deadline && (had_fatal || !first_fatal_seen_)) {
    loop_->RunOnce(std::min(deadline, loop_->Now() + 10 * kNsPerMs));
  }
  Status result;
  if (!had_fatal && first_fatal_seen_) {
    result = Status::Unavailable("during shutdown: a peer failed (see the log above)");
  } else if (waiting()) {
    std::string who;
    for (int p : peers_) {
      const size_t pi = static_cast<size_t>(p);
      if (!lost_[pi] && !bye_from_[pi]) {
        who += fmt::format("{}rank {}", who.empty() ? "" : ", ", p);
      }
    }
    if (who.empty()) who = fmt::format("nobody ({} sends still in flight)", sends_in_flight_);
    result = Status::Timeout(fmt::format("rank {}: no goodbye within {} from {}", options_.rank,
                                         FormatDuration(timeout), who));
  }
  CloseAll();  // completions already queued are still delivered from the loop
  return result;
}

void FabricTransport::Abort(const std::string& reason, TimeNs linger) {
  if (ep_ == nullptr) return;
  shutting_down_ = true;
  StopHeartbeats();
  backlog_.clear();  // queued data is dropped: the reason goes first
  const std::string text = reason.substr(0, std::min<size_t>(kMaxAbortBytes, kInlineBytes));
  for (int p : peers_) {
    if (lost_[static_cast<size_t>(p)]) continue;
    ++aborts_in_flight_;
    SendSimpleCtrl(p, kAbort, text.data(), text.size());
  }
  // Let the news out; then keep reading a little, so that the provider does not close
  // connections with unread data (a reset could overtake the reason at the peer).
  const TimeNs deadline = loop_->Now() + linger;
  constexpr TimeNs kAfter = 100 * kNsPerMs;
  while (aborts_in_flight_ > 0 && loop_->Now() < deadline) {
    loop_->RunOnce(std::min(deadline, loop_->Now() + 10 * kNsPerMs));
  }
  const TimeNs until = std::min(deadline, loop_->Now() + kAfter);
  while (loop_->Now() < until) loop_->RunOnce(until);
  CloseAll();
}

}  // namespace genie::net
