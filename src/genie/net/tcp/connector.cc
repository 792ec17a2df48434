// TcpTransport: listening, dialling (the higher rank connects to the lower, retrying until
// the connect deadline) and the hello / hello-ack handshake that names each connection's peer
// and channel and rejects strangers.
#include <fmt/format.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "genie/net/interface_address.h"
#include "genie/net/socket_util.h"
#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

Result<std::string> TcpTransport::Listen() {
  GENIE_ASSIGN_OR_RETURN(SocketAddress addr, ResolveAddress(options_.bind_addr, 0));
  int fd = socket(addr.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  // Buffers and congestion control set on the listener are inherited by accepted sockets
  // (window scaling is agreed in the SYN, before accept() could set anything).
  DataSocketOptions so{options_.socket_buffer_bytes, options_.peer_timeout,
                       options_.tcp_congestion};
  Status st = SetDataSocketOptions(fd, so);
  if (st.ok() && bind(fd, addr.get(), addr.length) != 0) {
    st = errno == EADDRNOTAVAIL
             ? AddressNotOnThisHost(options_.rank, options_.bind_addr, "listen")
             : Status::IoError(fmt::format("rank {}: cannot bind {}: {} (use --bind with an "
                                           "address of this host)",
                                           options_.rank, options_.bind_addr, strerror(errno)));
  }
  if (st.ok() && listen(fd, 1024) != 0) {
    st = Status::IoError(fmt::format("listen: {}", strerror(errno)));
  }
  if (!st.ok()) {
    close(fd);
    return st;
  }
  listen_fd_ = fd;
  listen_address_ = SocketName(fd, false);
  GENIE_RETURN_IF_ERROR(loop_->AddFd(fd, EPOLLIN, [this](uint32_t) { OnAccept(); }));
  spdlog::debug("rank {}: tcp listening on {}", options_.rank, listen_address_);
  return listen_address_;
}

Status TcpTransport::Connect(const std::vector<std::string>& addresses,
                             const std::vector<int>& peers) {
  if (static_cast<int>(addresses.size()) != options_.world_size) {
    return Status::InvalidArgument(
        fmt::format("{} addresses for a world of {} ranks", addresses.size(), options_.world_size));
  }
  GENIE_ASSIGN_OR_RETURN(peers_, NormalizePeers(peers, options_.rank, options_.world_size));
  is_peer_.assign(static_cast<size_t>(options_.world_size), 0);
  for (int p : peers_) is_peer_[static_cast<size_t>(p)] = 1;
  // Higher ranks may have dialled before we got here (accepting starts at Listen()).
  for (int p = options_.rank + 1; p < options_.world_size; ++p) {
    if (counters_[static_cast<size_t>(p)].connections > 0 && !is_peer_[static_cast<size_t>(p)]) {
      is_peer_[static_cast<size_t>(p)] = 1;
      peers_.insert(std::lower_bound(peers_.begin(), peers_.end(), p), p);
    }
  }
  heartbeats_.liveness().SetPeers(peers_);
  addresses_ = addresses;
  connect_deadline_ = loop_->Now() + options_.peer_timeout;
  // Heartbeats start now, not after Connect(): a peer whose own Connect() is done checks us
  // while we may still wait here for a slower rank.
  heartbeats_.Start();
  Status st = Status::Ok();
  // The higher rank of a pair dials; so each pair is dialled once, by a rule both ends know.
  for (size_t i = 0; i < peers_.size() && peers_[i] < options_.rank && st.ok(); ++i) {
    for (int ch = 0; ch < options_.channels && st.ok(); ++ch) st = StartConnect(peers_[i], ch);
  }
  if (!st.ok()) {
    heartbeats_.Stop();
    return st;
  }
  // peers_ may grow while we wait (a higher rank adopted in OnHello).
  auto expected = [this] { return static_cast<int>(peers_.size()) * options_.channels; };
  while (established_ < expected() && !completions_.fatal_seen() && loop_->Now() < connect_deadline_) {
    loop_->RunOnce(connect_deadline_);
  }
  if (completions_.fatal_seen()) {
    heartbeats_.Stop();
    return completions_.first_fatal();
  }
  if (established_ < expected()) {
    heartbeats_.Stop();
    std::string missing;
    for (int p : peers_) {
      int n = counters_[static_cast<size_t>(p)].connections;
      if (n < options_.channels) {
        missing +=
            fmt::format("{}rank {} ({} of {} connections, at {})", missing.empty() ? "" : ", ", p,
                        n, options_.channels, addresses_[static_cast<size_t>(p)]);
      }
    }
    return Status::Timeout(fmt::format(
        "rank {}: could not connect to {} within {}; are those ranks running and is the address "
        "reachable from here? (--peer-timeout sets the wait; a higher rank that never dials "
        "may not share this rank's plans: same workload and flags on every rank?)",
        options_.rank, missing, FormatDuration(options_.peer_timeout)));
  }
  spdlog::debug("rank {}: {} tcp connections up", options_.rank, established_);
  if (heartbeats_.ticking()) heartbeats_.liveness().StartChecking();
  StartProbeRttWatch();
  return Status::Ok();
}

Status TcpTransport::StartConnect(int peer, int channel) {
  const std::string& text = addresses_[static_cast<size_t>(peer)];
  GENIE_ASSIGN_OR_RETURN(auto hp, SplitHostPort(text));
  GENIE_ASSIGN_OR_RETURN(SocketAddress remote, ResolveAddress(hp.first, hp.second));
  GENIE_ASSIGN_OR_RETURN(SocketAddress local, ResolveAddress(options_.bind_addr, 0));
  int fd = socket(remote.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  DataSocketOptions so{options_.socket_buffer_bytes, options_.peer_timeout,
                       options_.tcp_congestion};
  Status st = SetDataSocketOptions(fd, so);
  // Bind the source too, so traffic leaves from the chosen address (NIC) only. Port 0 plus
  // IP_BIND_ADDRESS_NO_PORT defers the port choice to connect(), where the kernel may reuse a
  // port for different destinations: a plain bind() reserves a port per socket and runs out
  // of the ~28k ephemeral ports ("Address already in use") at a few hundred local ranks.
  if (st.ok()) {
    int one = 1;
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
  }
  if (st.ok() && bind(fd, local.get(), local.length) != 0) {
    st = Status::IoError(fmt::format("rank {}: cannot bind {} for connecting to rank {}: {}",
                                     options_.rank, options_.bind_addr, peer, strerror(errno)));
  }
  if (st.ok() && connect(fd, remote.get(), remote.length) != 0 && errno != EINPROGRESS) {
    int err = errno;
    close(fd);
    RetryConnect(peer, channel, strerror(err));
    return Status::Ok();
  }
  if (!st.ok()) {
    close(fd);
    return st;
  }
  auto conn = std::make_unique<Conn>();
  Conn* c = conn.get();
  c->fd = fd;
  c->peer = peer;
  c->channel = channel;
  c->outgoing = true;
  c->state = Conn::State::kConnecting;
  c->remote = text;
  c->rbuf.resize(tcp_internal::kReadBufferBytes);
  conns_[fd] = std::move(conn);
  c->want_out = true;
  return loop_->AddFd(fd, EPOLLOUT, [this, c](uint32_t ev) { OnConnEvent(c, ev); });
}

void TcpTransport::RetryConnect(int peer, int channel, const std::string& why) {
  if (loop_->Now() + tcp_internal::kConnectRetry >= connect_deadline_) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: cannot connect to rank {} at {} (channel {}): {}", options_.rank,
                    peer, addresses_[static_cast<size_t>(peer)], channel, why)));
    return;
  }
  spdlog::debug("rank {}: connect to rank {} failed ({}); retrying", options_.rank, peer, why);
  loop_->RunAfter(tcp_internal::kConnectRetry, [this, peer, channel] {
    Status st = StartConnect(peer, channel);
    if (!st.ok()) ReportFatal(st);
  });
}

void TcpTransport::OnAccept() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
        spdlog::warn("rank {}: accept on {}: {}", options_.rank, listen_address_, strerror(errno));
      }
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    DataSocketOptions so{0, options_.peer_timeout, ""};  // buffers/congestion inherited
    (void)SetDataSocketOptions(fd, so);
    auto conn = std::make_unique<Conn>();
    Conn* c = conn.get();
    c->fd = fd;
    c->state = Conn::State::kAwaitHello;
    c->remote = SocketName(fd, true);
    c->rbuf.resize(tcp_internal::kReadBufferBytes);
    conns_[fd] = std::move(conn);
    Status st = loop_->AddFd(fd, EPOLLIN, [this, c](uint32_t ev) { OnConnEvent(c, ev); });
    if (!st.ok()) CloseConn(c, st.message());
  }
}

void TcpTransport::FinishConnect(Conn* c) {
  int err = 0;
  socklen_t len = sizeof(err);
  getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    int peer = c->peer, channel = c->channel;
    c->peer = -1;  // a failed attempt is not a lost peer
    CloseConn(c, "");
    RetryConnect(peer, channel, strerror(err));
    return;
  }
  c->state = Conn::State::kAwaitAck;
  SetWantOut(c, false);
  Enqueue(c, FrameType::kHello, 0, static_cast<uint16_t>(c->channel), 0, options_.job_id.data(),
          options_.job_id.size(), static_cast<uint64_t>(options_.world_size), 0, tcp_internal::kControl, 0);
}

FrameExpectation TcpTransport::ExpectationFor(const Conn* c) const {
  FrameExpectation e;
  e.job = job_hash_;
  e.src = c->peer;
  e.dst = static_cast<uint32_t>(options_.rank);
  e.world_size = static_cast<uint32_t>(options_.world_size);
  e.channel = c->channel;
  e.channels = static_cast<uint32_t>(options_.channels);
  e.seq = c->recv_seq;
  e.max_length = options_.max_message_bytes;
  return e;
}

Status TcpTransport::OnHello(Conn* c, const FrameHeader& h) {
  int src = static_cast<int>(h.src);
  if (c->text != options_.job_id) {
    return Status::InvalidArgument(
        fmt::format("wrong job id '{}' (this job is '{}')", c->text, options_.job_id));
  }
  if (src <= options_.rank) {
    return Status::InvalidArgument(
        fmt::format("rank {} connected to rank {}, but lower ranks accept; duplicate rank?",
                    src, options_.rank));
  }
  if (by_peer_[static_cast<size_t>(src)][h.channel] != nullptr) {
    return Status::InvalidArgument(fmt::format(
        "second connection claiming rank {} channel {}; two processes with the same rank?", src,
        h.channel));
  }
  if (!is_peer_.empty() && !is_peer_[static_cast<size_t>(src)]) {
    // Its plans use this rank though ours do not name it (a trace whose SEND has no RECV
    // here, say). Adopted: its messages are then matched, and liveness covers it both ways.
    spdlog::debug("rank {}: rank {} connected though this rank's plans do not use it",
                  options_.rank, src);
    is_peer_[static_cast<size_t>(src)] = 1;
    peers_.insert(std::lower_bound(peers_.begin(), peers_.end(), src), src);
    heartbeats_.liveness().SetPeers(peers_);
  }
  c->peer = src;
  c->channel = h.channel;
  Enqueue(c, FrameType::kHelloAck, 0, h.channel, 0, nullptr, 0, 0, 0, tcp_internal::kControl, 0);
  Established(c);
  return Status::Ok();
}

void TcpTransport::Established(Conn* c) {
  if (c->state == Conn::State::kClosed) return;  // the ack could not be sent
  c->state = Conn::State::kOpen;
  by_peer_[static_cast<size_t>(c->peer)][static_cast<size_t>(c->channel)] = c;
  ++counters_[static_cast<size_t>(c->peer)].connections;
  ++established_;
  // Both ends as the kernel has them (the dialler's source port is picked at connect()).
  endpoints_.push_back({c->peer, static_cast<uint16_t>(c->channel), SocketName(c->fd, false),
                        SocketName(c->fd, true)});
  spdlog::debug("rank {}: connected to rank {} channel {} ({})", options_.rank, c->peer, c->channel,
                c->remote);
}

}  // namespace genie::net
