// FabricTransport: watch connections — one idle TCP connection per peer pair, on the bind
// address, whose only job is to end when a rank's process does. ofi_rxm hides a dead peer:
// it reconnects forever and sends to it just wait, with no error on the CQ, so without this a
// crashed rank would be named only after --peer-timeout of silence. The kernel closes a dead
// process's sockets at once, and the end of a watch connection without a goodbye (or abort)
// over the fabric is reported as "rank A lost rank B", as over TCP. Since the goodbye travels
// on the fabric and the end on the watch connection, the verdict waits a short grace period
// in which the CQ is read, so that a goodbye or abort sent just before is seen first.
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"
#include "genie/net/interface_address.h"
#include "genie/net/socket_util.h"

namespace genie::net {

using namespace fabric_internal;

namespace {

constexpr TimeNs kWatchGrace = 200 * kNsPerMs;

struct WatchHello {
  uint32_t magic;
  uint32_t rank;
  uint64_t job_hash;
};

// Reads exactly n bytes from a blocking-with-timeout socket; false on EOF, error or timeout.
bool ReadFull(int fd, void* buf, size_t n, int timeout_ms) {
  auto* p = static_cast<unsigned char*>(buf);
  while (n > 0) {
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, timeout_ms) <= 0) return false;
    ssize_t r = recv(fd, p, n, 0);
    if (r <= 0) {
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace

Result<std::string> FabricTransport::ListenWatch() {
  GENIE_ASSIGN_OR_RETURN(SocketAddress addr, ResolveAddress(options_.bind_addr, 0));
  int fd = socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  if (bind(fd, addr.get(), addr.length) != 0 || listen(fd, 1024) != 0) {
    Status st = errno == EADDRNOTAVAIL
                    ? AddressNotOnThisHost(options_.rank, options_.bind_addr, "listen")
                    : Status::IoError(fmt::format(
        "rank {}: cannot listen on {} for the watch connections: {} (use --bind with an address "
        "of this host)",
        options_.rank, options_.bind_addr, strerror(errno)));
    close(fd);
    return st;
  }
  watch_listen_fd_ = fd;
  return SocketName(fd, false);
}

Status FabricTransport::ConnectWatches(const std::vector<std::string>& watch, TimeNs deadline) {
  const int n = options_.world_size;
  watch_fd_.assign(static_cast<size_t>(n), -1);
  auto fail = [&](const std::string& why) {
    return Status::Unavailable(fmt::format("rank {}: watch connections: {}", options_.rank, why));
  };
  // Lower peers are dialled; higher peers dial us.
  int expected = 0;
  for (int p : peers_) {
    if (p > options_.rank) {
      ++expected;
      continue;
    }
    GENIE_ASSIGN_OR_RETURN(auto hp, SplitHostPort(watch[static_cast<size_t>(p)]));
    GENIE_ASSIGN_OR_RETURN(SocketAddress a, ResolveAddress(hp.first, hp.second));
    int fd = socket(a.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(strerror(errno));
    watch_fd_[static_cast<size_t>(p)] = fd;
    if (connect(fd, a.get(), a.length) != 0 && errno != EINPROGRESS) {
      return fail(fmt::format("connect to rank {} ({}): {}", p, watch[static_cast<size_t>(p)],
                              strerror(errno)));
    }
    pollfd pfd{fd, POLLOUT, 0};
    const int ms = static_cast<int>(std::max<TimeNs>(1, (deadline - loop_->Now()) / kNsPerMs));
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&pfd, 1, ms) <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 ||
        err != 0) {
      return fail(fmt::format("connect to rank {} ({}): {}", p, watch[static_cast<size_t>(p)],
                              err != 0 ? strerror(err) : "timed out"));
    }
    WatchHello hello{kMagic, static_cast<uint32_t>(options_.rank), job_hash_};
    if (send(fd, &hello, sizeof(hello), MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(hello))) {
      return fail(fmt::format("hello to rank {}: {}", p, strerror(errno)));
    }
  }
  while (expected > 0) {
    pollfd pfd{watch_listen_fd_, POLLIN, 0};
    const TimeNs left = deadline - loop_->Now();
    if (left <= 0 || poll(&pfd, 1, static_cast<int>(std::max<TimeNs>(1, left / kNsPerMs))) <= 0) {
      return fail(fmt::format("{} higher rank(s) did not connect within --peer-timeout", expected));
    }
    int fd = accept4(watch_listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    WatchHello hello{};
    if (!ReadFull(fd, &hello, sizeof(hello), 5000) || hello.magic != kMagic ||
        hello.job_hash != job_hash_ || hello.rank <= static_cast<uint32_t>(options_.rank) ||
        hello.rank >= static_cast<uint32_t>(n) || !is_peer_[hello.rank] ||
        watch_fd_[hello.rank] >= 0) {
      ++rejected_;
      spdlog::warn("rank {}: rejected a watch connection from {} (not a rank of this job)",
                   options_.rank, SocketName(fd, true));
      close(fd);
      continue;
    }
    watch_fd_[hello.rank] = fd;
    --expected;
  }
  for (int p = 0; p < n; ++p) {
    const int fd = watch_fd_[static_cast<size_t>(p)];
    if (fd < 0) continue;
    GENIE_RETURN_IF_ERROR(
        loop_->AddFd(fd, EPOLLIN | EPOLLRDHUP, [this, p](uint32_t) { OnWatchEnded(p); }));
  }
  return Status::Ok();
}

void FabricTransport::OnWatchEnded(int peer) {
  const size_t pi = static_cast<size_t>(peer);
  const int fd = watch_fd_[pi];
  if (fd < 0) return;
  loop_->RemoveFd(fd);
  close(fd);
  watch_fd_[pi] = -1;
  if (bye_from_[pi] || lost_[pi]) return;
  // A goodbye or abort sent just before the end may still be on its way over the fabric: the
  // loop keeps reading the CQ meanwhile.
  std::weak_ptr<bool> alive = alive_;
  loop_->RunAfter(kWatchGrace, [this, alive, peer, pi] {
    if (alive.expired() || !*alive.lock()) return;
    Drain();
    if (bye_from_[pi] || lost_[pi]) return;
    PeerLost(peer, "its watch connection closed without goodbye");
  });
}

void FabricTransport::CloseWatches() {
  for (int& fd : watch_fd_) {
    if (fd < 0) continue;
    loop_->RemoveFd(fd);
    close(fd);
    fd = -1;
  }
  if (watch_listen_fd_ >= 0) close(watch_listen_fd_);
  watch_listen_fd_ = -1;
}

}  // namespace genie::net
