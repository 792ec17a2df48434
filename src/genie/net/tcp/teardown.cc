// TcpTransport: the end of connections — one closing, giving up on a silent peer, the orderly
// Shutdown (goodbyes, a final barrier) and the failure end Abort (the reason told to every peer
// before closing); the parts every transport shares are net/teardown.h's and net/heartbeats.h's.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"
#include "genie/net/teardown.h"

namespace genie::net {

PeerLiveness::Link TcpTransport::LinkTo(int peer) const {
  PeerLiveness::Link link;
  const std::vector<Conn*>& conns = by_peer_[static_cast<size_t>(peer)];
  for (const Conn* c : conns) {
    if (c == nullptr) continue;
    link.open = true;
    // We stopped reading it (flow control), or it said goodbye and sends nothing more.
    link.excused = link.excused || c->paused || c->bye_received;
  }
  // Heartbeats go on channel 0. If it still has frames queued, its socket is full (the peer
  // is not reading it), and a heartbeat would only wait behind them.
  const Conn* c0 = conns[0];
  link.can_heartbeat = c0 != nullptr && !c0->bye_queued && c0->outq.empty();
  return link;
}

void TcpTransport::GiveUp(int peer) {
  // Closed (quietly: reported once) so that a peer that resumes fails at once instead of
  // waiting for frames from a rank that has given up on it.
  const std::vector<Conn*> to_close = by_peer_[static_cast<size_t>(peer)];
  for (Conn* c : to_close) {
    if (c != nullptr) CloseConn(c, "");
  }
}

void TcpTransport::MaybeFinishBye(Conn* c) {
  if (c->state != Conn::State::kClosed && c->bye_flushed && c->bye_received) CloseConn(c, "");
}

void TcpTransport::CloseConn(Conn* c, const std::string& reason) {
  if (c->state == Conn::State::kClosed) return;
  bool was_open = c->state == Conn::State::kOpen;
  if (was_open) {
    probe_rtt_.Forget(c->fd, loop_->Now());
    by_peer_[static_cast<size_t>(c->peer)][static_cast<size_t>(c->channel)] = nullptr;
    --counters_[static_cast<size_t>(c->peer)].connections;
  }
  if (!reason.empty()) {
    if (c->peer >= 0 && c->state != Conn::State::kAwaitHello) {
      heartbeats_.liveness().Done(c->peer);  // reported once is enough
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
  heartbeats_.Stop();
  StopProbeRttWatch();
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
  DriveWhile(loop_, deadline, [&] {
    const Bytes now_queued = queued_bytes();
    if (now_queued != last) {
      last = now_queued;
      progressed = loop_->Now();
    }
    return last > 0 && loop_->Now() - progressed < kStalled;
  });
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
  DriveWhile(loop_, hang_up_by, waiting);
  CloseAll();
}

Status TcpTransport::Shutdown(TimeNs timeout) {
  shutting_down_ = true;
  // Peers stop checking us once our goodbye arrives; it is queued below, on every connection.
  heartbeats_.Stop();
  StopProbeRttWatch();
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
  Status result = AwaitGoodbyes(
      loop_, completions_, options_.rank, timeout, [this] { return AnyOpen(); },
      [this] {
        std::string who;
        for (auto& [fd, c] : conns_) {
          if (c->state == Conn::State::kOpen) {
            who += fmt::format("{}rank {} channel {}", who.empty() ? "" : ", ", c->peer,
                               c->channel);
          }
        }
        return who;
      });
  CloseAll();
  dead_.clear();
  return result;
}

}  // namespace genie::net
