// TcpTransport: the end of connections — one closing, the orderly Shutdown (goodbyes, a final
// barrier) and the failure end Abort (the reason told to every peer before closing).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

void TcpTransport::MaybeFinishBye(Conn* c) {
  if (c->state != Conn::State::kClosed && c->bye_flushed && c->bye_received) CloseConn(c, "");
}

void TcpTransport::CloseConn(Conn* c, const std::string& reason) {
  if (c->state == Conn::State::kClosed) return;
  bool was_open = c->state == Conn::State::kOpen;
  if (was_open) {
    by_peer_[static_cast<size_t>(c->peer)][static_cast<size_t>(c->channel)] = nullptr;
    --counters_[static_cast<size_t>(c->peer)].connections;
  }
  if (!reason.empty()) {
    if (c->peer >= 0 && c->state != Conn::State::kAwaitHello) {
      liveness_.Done(c->peer);  // reported once is enough
      ReportFatal(
          Status::Unavailable(fmt::format("rank {} lost rank {} (channel {}, {}): {}",
                                          options_.rank, c->peer, c->channel, c->remote, reason)));
    } else {
      ++rejected_;
      spdlog::warn("rank {}: rejected connection from {}: {}", options_.rank, c->remote, reason);
    }
  }
  c->state = Conn::State::kClosed;
  if (c->dest == Conn::Dest::kArrived && c->in_payload) {
    ReleaseUnexpected(c->cur.length);
    matcher_.ReturnBuffer(std::move(c->arrived.buf));
  }
  loop_->RemoveFd(c->fd);
  close(c->fd);
  auto it = conns_.find(c->fd);
  if (it != conns_.end()) {
    dead_.push_back(std::move(it->second));
    conns_.erase(it);
    if (dead_.size() == 1) loop_->Post([this] { dead_.clear(); });
  }
}


bool TcpTransport::AnyOpen() const {
  for (const auto& [fd, c] : conns_) {
    if (c->state == Conn::State::kOpen) return true;
  }
  return false;
}

void TcpTransport::CloseAll() {
  std::vector<Conn*> all;
  for (auto& [fd, c] : conns_) all.push_back(c.get());
  for (Conn* c : all) {
    c->peer = c->state == Conn::State::kOpen ? c->peer : -1;
    CloseConn(c, "");
  }
  if (listen_fd_ >= 0) {
    loop_->RemoveFd(listen_fd_);
    close(listen_fd_);
    listen_fd_ = -1;
  }
}

void TcpTransport::Abort(const std::string& reason, TimeNs linger) {
  shutting_down_ = true;
  StopHeartbeats();
  abort_reason_ = reason.substr(0, kMaxAbortBytes);  // outlives the frames that point at it
  std::vector<Conn*> open;
  for (auto& [fd, c] : conns_) {
    if (c->state == Conn::State::kOpen) open.push_back(c.get());
  }
  for (Conn* c : open) {
    // A stream cannot skip half a frame: keep the one being written, drop the rest.
    // Dropped frames give back their sequence numbers, or the peer would reject the abort.
    const size_t keep = !c->outq.empty() && c->outq.front().done > 0 ? 1 : 0;
    c->send_seq -= c->outq.size() - keep;
    while (c->outq.size() > keep) c->outq.pop_back();
    c->bye_queued = true;  // nothing may be posted after this
    Enqueue(c, FrameType::kAbort, kFlagHasData, static_cast<uint16_t>(c->channel), 0,
            abort_reason_.data(), abort_reason_.size(), 0, 0, tcp_internal::kControl, 0);
  }
  const TimeNs deadline = loop_->Now() + linger;
  // Let the news out. A connection whose queue makes no progress for a while belongs to a
  // peer that stopped reading (perhaps the very one being given up on): do not wait for it.
  constexpr TimeNs kStalled = 200 * kNsPerMs;
  auto queued_bytes = [&] {
    Bytes total = 0;
    for (auto& [fd, c] : conns_) {
      if (c->state != Conn::State::kOpen) continue;
      for (const OutFrame& f : c->outq) total += kFrameHeaderBytes + f.bytes - f.done;
    }
    return total;
  };
  Bytes last = queued_bytes();
  TimeNs progressed = loop_->Now();
  while (last > 0 && loop_->Now() < deadline && loop_->Now() - progressed < kStalled) {
    loop_->RunOnce(std::min(deadline, loop_->Now() + 20 * kNsPerMs));
    const Bytes now_queued = queued_bytes();
    if (now_queued != last) {
      last = now_queued;
      progressed = loop_->Now();
    }
  }
  // Half-close where the news went out, and keep reading until those peers hang up: closing a
  // socket with unread data sends RST, and a peer hit by it (or by EPIPE on its own send) could
  // fail with "lost rank N" before it reads our reason.
  std::set<int> told;
  for (auto& [fd, c] : conns_) {
    if (c->state == Conn::State::kOpen && c->outq.empty()) {
      ::shutdown(fd, SHUT_WR);
      told.insert(fd);
    }
  }
  auto waiting = [&] {
    for (int fd : told) {
      auto it = conns_.find(fd);
      if (it != conns_.end() && it->second->state == Conn::State::kOpen) return true;
    }
    return false;
  };
  // A peer that reads hangs up within milliseconds; one that does not (stopped, and perhaps
  // the reason for all this) is not worth more than the stall allowance.
  const TimeNs hang_up_by = std::min(deadline, loop_->Now() + kStalled);
  while (waiting() && loop_->Now() < hang_up_by) loop_->RunOnce(hang_up_by);
  CloseAll();
}

Status TcpTransport::Shutdown(TimeNs timeout) {
  shutting_down_ = true;
  // Peers stop checking us once our goodbye arrives; it is queued below, on every connection.
  StopHeartbeats();
  std::vector<Conn*> open;
  for (auto& [fd, c] : conns_) {
    if (c->state == Conn::State::kOpen) open.push_back(c.get());
  }
  for (Conn* c : open) {
    if (c->bye_queued || c->state != Conn::State::kOpen) continue;
    c->bye_queued = true;
    Enqueue(c, FrameType::kBye, 0, static_cast<uint16_t>(c->channel), 0, nullptr, 0, 0, 0, tcp_internal::kControl,
            0);
  }
  TimeNs deadline = loop_->Now() + timeout;
  bool had_fatal = first_fatal_seen_;
  while (AnyOpen() && loop_->Now() < deadline && (had_fatal || !first_fatal_seen_)) {
    loop_->RunOnce(deadline);
  }
  Status result;
  if (!had_fatal && first_fatal_seen_) {
    result = Status::Unavailable("during shutdown: a peer failed (see the log above)");
  } else if (AnyOpen()) {
    std::string who;
    for (auto& [fd, c] : conns_) {
      if (c->state == Conn::State::kOpen) {
        who += fmt::format("{}rank {} channel {}", who.empty() ? "" : ", ", c->peer, c->channel);
      }
    }
    result = Status::Timeout(fmt::format("rank {}: no goodbye within {} from {}", options_.rank,
                                         FormatDuration(timeout), who));
  }
  CloseAll();
  dead_.clear();
  return result;
}

}  // namespace genie::net
