// TcpTransport: liveness. A timerfd ticks every PeerLiveness::interval() from Connect() to
// Shutdown(); each tick lets PeerLiveness (which holds the rules, on the injected clock) ask
// for heartbeats on channel 0 and name peers that fell silent.
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

Status TcpTransport::StartHeartbeats() {
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

void TcpTransport::StopHeartbeats() {
  liveness_.StopChecking();
  if (tick_fd_ < 0) return;
  loop_->RemoveFd(tick_fd_);
  close(tick_fd_);
  tick_fd_ = -1;
}

void TcpTransport::OnHeartbeatTick() {
  uint64_t expirations = 0;
  if (read(tick_fd_, &expirations, sizeof(expirations)) < 0) return;  // spurious wake-up
  PeerLiveness::TickActions actions;
  actions.link = [this](int p) {
    PeerLiveness::Link link;
    const std::vector<Conn*>& conns = by_peer_[static_cast<size_t>(p)];
    for (Conn* c : conns) {
      if (c == nullptr) continue;
      link.open = true;
      // We stopped reading it (flow control), or it said goodbye and sends nothing more.
      link.excused = link.excused || c->paused || c->bye_received;
    }
    // Heartbeats go on channel 0. If it still has frames queued, its socket is full (the peer
    // is not reading it), and a heartbeat would only wait behind them.
    Conn* c0 = conns[0];
    link.can_heartbeat = c0 != nullptr && !c0->bye_queued && c0->outq.empty();
    return link;
  };
  actions.send_heartbeat = [this](int p) {
    Enqueue(by_peer_[static_cast<size_t>(p)][0], FrameType::kHeartbeat, 0, 0, 0, nullptr, 0, 0, 0,
            tcp_internal::kControl, 0);
  };
  actions.silent = [this](int p, TimeNs silent) {
    ReportFatal(Status::Unavailable(fmt::format(
        "rank {}: rank {} ({}) has not been heard from for {} (--peer-timeout {}): it stopped, "
        "hung or its link is down",
        options_.rank, p, addresses_[static_cast<size_t>(p)], FormatDuration(silent),
        FormatDuration(options_.peer_timeout))));
    // Closed (quietly: reported once) so that a peer that resumes fails at once instead of
    // waiting for frames from a rank that has given up on it.
    const std::vector<Conn*> to_close = by_peer_[static_cast<size_t>(p)];
    for (Conn* c : to_close) {
      if (c != nullptr) CloseConn(c, "");
    }
  };
  liveness_.Tick(actions);
}

}  // namespace genie::net
