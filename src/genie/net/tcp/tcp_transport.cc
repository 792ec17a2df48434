#include "genie/net/tcp/tcp_transport.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "genie/net/socket_util.h"

namespace genie::net {

namespace {

constexpr size_t kZeroBytes = 1 << 20;
// Filler for messages without data: one shared zero page run, never written.
alignas(64) const unsigned char kZeros[kZeroBytes] = {};
constexpr size_t kReadBufferBytes = 64 << 10;
constexpr size_t kScratchBytes = 1 << 20;
constexpr size_t kMaxIov = 64;
// Bytes read from one connection per readiness event, so one busy peer cannot starve others.
constexpr size_t kReadBudget = 4 << 20;
constexpr TimeNs kConnectRetry = 50 * kNsPerMs;
// Unexpected payload bytes held before connections without a waiting receive stop being read.
constexpr Bytes kUnexpectedCap = Bytes{64} << 20;
// Heartbeat interval = peer_timeout / 4 within these bounds: often enough that an idle peer
// is heard about four times per timeout, rarely enough to cost nothing on long timeouts.
constexpr TimeNs kMinHeartbeat = 10 * kNsPerMs;
constexpr TimeNs kMaxHeartbeat = kNsPerSec;

enum Kind : int { kControl = 0, kSendKind = 1, kWriteKind = 2 };

const char* TypeName(FrameType t) {
  switch (t) {
    case FrameType::kHello:
      return "hello";
    case FrameType::kHelloAck:
      return "hello-ack";
    case FrameType::kData:
      return "data";
    case FrameType::kWrite:
      return "write";
    case FrameType::kBye:
      return "goodbye";
    case FrameType::kHeartbeat:
      return "heartbeat";
    case FrameType::kAbort:
      return "abort";
  }
  return "unknown";
}

}  // namespace

struct TcpTransport::OutFrame {
  unsigned char hdr[kFrameHeaderBytes];
  const unsigned char* data;  // nullptr: filler from kZeros
  Bytes bytes;
  Bytes done;  // of kFrameHeaderBytes + bytes
  int kind;
  uint64_t cookie;
  FrameType type;
};

struct TcpTransport::Conn {
  enum class State { kConnecting, kAwaitAck, kAwaitHello, kOpen, kClosed };
  int fd = -1;
  int peer = -1;
  int channel = -1;
  bool outgoing = false;
  State state = State::kConnecting;
  std::string remote;
  std::deque<OutFrame> outq;
  bool want_out = false;
  bool paused = false;  // not reading: too many unexpected bytes buffered (flow control)
  uint64_t send_seq = 0;
  uint64_t recv_seq = 0;
  bool bye_queued = false;
  bool bye_flushed = false;
  bool bye_received = false;
  // Receive state.
  std::vector<unsigned char> rbuf;
  size_t rpos = 0, rend = 0;
  bool in_payload = false;
  FrameHeader cur;
  enum class Dest { kPosted, kArrived, kDiscard, kRegion, kText } dest = Dest::kDiscard;
  unsigned char* target = nullptr;
  Bytes got = 0;
  MessageMatcher::Posted posted{};
  MessageMatcher::Arrived arrived{};
  std::string text;
};

struct TcpTransport::Completion {
  enum Type { kSend, kRecv, kWrite, kRemoteWrite } type;
  int peer;
  uint16_t channel;
  uint64_t cookie;  // cookie, or region key for kRemoteWrite
  Bytes offset;     // kRemoteWrite: region offset; kRecv: the sender's remote_data
  Bytes bytes;
  uint32_t imm;
};

Result<std::unique_ptr<TcpTransport>> TcpTransport::Create(loop::EventLoop* loop,
                                                           const TransportOptions& options) {
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size) {
    return Status::InvalidArgument(
        fmt::format("rank {} is outside a world of {} ranks", options.rank, options.world_size));
  }
  if (options.channels < 1 || options.channels > 64) {
    return Status::InvalidArgument(
        fmt::format("channels = {}: use 1 to 64 connections per peer pair", options.channels));
  }
  if (options.job_id.size() > kMaxJobIdBytes) {
    return Status::InvalidArgument(fmt::format("job id is {} bytes; at most {} allowed",
                                               options.job_id.size(), kMaxJobIdBytes));
  }
  return std::unique_ptr<TcpTransport>(new TcpTransport(loop, options));
}

TcpTransport::TcpTransport(loop::EventLoop* loop, const TransportOptions& options)
    : loop_(loop),
      options_(options),
      job_hash_(JobHash(options.job_id)),
      by_peer_(static_cast<size_t>(options.world_size),
               std::vector<Conn*>(static_cast<size_t>(options.channels), nullptr)),
      counters_(static_cast<size_t>(options.world_size)),
      posted_count_(static_cast<size_t>(options.world_size),
                    std::vector<int>(static_cast<size_t>(options.channels), 0)),
      scratch_(kScratchBytes),
      live_(static_cast<size_t>(options.world_size)) {}

TcpTransport::~TcpTransport() {
  StopHeartbeats();
  for (auto& [fd, c] : conns_) {
    loop_->RemoveFd(fd);
    close(fd);
  }
  if (listen_fd_ >= 0) {
    loop_->RemoveFd(listen_fd_);
    close(listen_fd_);
  }
}

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
    st =
        Status::IoError(fmt::format("rank {}: cannot bind {}: {} (use --bind with an address "
                                    "of this host)",
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

Status TcpTransport::Connect(const std::vector<std::string>& addresses) {
  if (static_cast<int>(addresses.size()) != options_.world_size) {
    return Status::InvalidArgument(
        fmt::format("{} addresses for a world of {} ranks", addresses.size(), options_.world_size));
  }
  addresses_ = addresses;
  connect_deadline_ = loop_->Now() + options_.peer_timeout;
  // Heartbeats start now, not after Connect(): a peer whose own Connect() is done checks us
  // while we may still wait here for a slower rank.
  GENIE_RETURN_IF_ERROR(StartHeartbeats());
  Status st = Status::Ok();
  for (int p = 0; p < options_.rank && st.ok(); ++p) {
    for (int ch = 0; ch < options_.channels && st.ok(); ++ch) st = StartConnect(p, ch);
  }
  if (!st.ok()) {
    StopHeartbeats();
    return st;
  }
  const int expected = (options_.world_size - 1) * options_.channels;
  while (established_ < expected && !first_fatal_seen_ && loop_->Now() < connect_deadline_) {
    loop_->RunOnce(connect_deadline_);
  }
  if (first_fatal_seen_) {
    StopHeartbeats();
    return first_fatal_;
  }
  if (established_ < expected) {
    StopHeartbeats();
    std::string missing;
    for (int p = 0; p < options_.world_size; ++p) {
      if (p == options_.rank) continue;
      int n = counters_[static_cast<size_t>(p)].connections;
      if (n < options_.channels) {
        missing +=
            fmt::format("{}rank {} ({} of {} connections, at {})", missing.empty() ? "" : ", ", p,
                        n, options_.channels, addresses_[static_cast<size_t>(p)]);
      }
    }
    return Status::Timeout(fmt::format(
        "rank {}: could not connect to {} within {}; are those ranks running and is the address "
        "reachable from here? (--peer-timeout sets the wait)",
        options_.rank, missing, FormatDuration(options_.peer_timeout)));
  }
  spdlog::debug("rank {}: {} tcp connections up", options_.rank, established_);
  const TimeNs now = loop_->Now();
  for (Liveness& l : live_) {
    l.heard = false;
    l.last_heard = now;
  }
  checking_ = tick_fd_ >= 0;
  return Status::Ok();
}

Status TcpTransport::StartHeartbeats() {
  if (options_.world_size < 2 || options_.peer_timeout <= 0 || tick_fd_ >= 0) {
    return Status::Ok();
  }
  heartbeat_interval_ = std::clamp(options_.peer_timeout / 4, kMinHeartbeat, kMaxHeartbeat);
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) return Status::IoError(fmt::format("timerfd_create: {}", strerror(errno)));
  itimerspec its{};
  its.it_value.tv_sec = static_cast<time_t>(heartbeat_interval_ / kNsPerSec);
  its.it_value.tv_nsec = static_cast<long>(heartbeat_interval_ % kNsPerSec);
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
  last_tick_ = loop_->Now();
  return Status::Ok();
}

void TcpTransport::StopHeartbeats() {
  checking_ = false;
  if (tick_fd_ < 0) return;
  loop_->RemoveFd(tick_fd_);
  close(tick_fd_);
  tick_fd_ = -1;
}

void TcpTransport::OnHeartbeatTick() {
  uint64_t expirations = 0;
  if (read(tick_fd_, &expirations, sizeof(expirations)) < 0) return;  // spurious wake-up
  const TimeNs now = loop_->Now();
  // Silence counts only while this loop runs. If it was not driven for a while (the process
  // was busy elsewhere, stopped, or starved of CPU), the peers' frames waited unread in the
  // sockets, and that time is not theirs to answer for: a tick counts at most one interval.
  const TimeNs not_counted = std::max<TimeNs>(0, now - last_tick_ - heartbeat_interval_);
  last_tick_ = now;
  for (int p = 0; p < options_.world_size; ++p) {
    if (p == options_.rank) continue;
    Liveness& l = live_[static_cast<size_t>(p)];
    const std::vector<Conn*>& conns = by_peer_[static_cast<size_t>(p)];
    // A heartbeat only to a peer that nothing went to since the last tick. If channel 0 still
    // has frames queued, its socket is full (the peer is not reading it), and a heartbeat
    // would only wait behind them.
    Conn* c0 = conns[0];
    if (!l.sent && c0 != nullptr && !c0->bye_queued && c0->outq.empty()) {
      Enqueue(c0, FrameType::kHeartbeat, 0, 0, 0, nullptr, 0, 0, 0, kControl, 0);
    }
    l.sent = false;
    const bool heard = l.heard;
    l.heard = false;
    if (!checking_ || l.done) continue;
    bool open = false;
    bool excused = false;
    for (Conn* c : conns) {
      if (c == nullptr) continue;
      open = true;
      // We stopped reading it (flow control), or it said goodbye and sends nothing more.
      excused = excused || c->paused || c->bye_received;
    }
    if (!open) continue;  // lost (reported then) or closed in order
    if (heard || excused) {
      l.last_heard = now;
      continue;
    }
    l.last_heard = std::min(now, l.last_heard + not_counted);
    const TimeNs silent = now - l.last_heard;
    if (silent < options_.peer_timeout) continue;
    l.done = true;
    ReportFatal(Status::Unavailable(fmt::format(
        "rank {}: rank {} ({}) has not been heard from for {} (--peer-timeout {}): it stopped, "
        "hung or its link is down",
        options_.rank, p, addresses_[static_cast<size_t>(p)], FormatDuration(silent),
        FormatDuration(options_.peer_timeout))));
    // Closed (quietly: reported once) so that a peer that resumes fails at once instead of
    // waiting for frames from a rank that has given up on it.
    const std::vector<Conn*> to_close = conns;
    for (Conn* c : to_close) {
      if (c != nullptr) CloseConn(c, "");
    }
  }
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
  // Bind the source too, so traffic leaves from the chosen address (NIC) only.
  if (st.ok() && bind(fd, local.get(), local.length) != 0) {
    st = Status::IoError(fmt::format("rank {}: cannot bind {} for connecting: {}", options_.rank,
                                     options_.bind_addr, strerror(errno)));
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
  c->rbuf.resize(kReadBufferBytes);
  conns_[fd] = std::move(conn);
  c->want_out = true;
  return loop_->AddFd(fd, EPOLLOUT, [this, c](uint32_t ev) { OnConnEvent(c, ev); });
}

void TcpTransport::RetryConnect(int peer, int channel, const std::string& why) {
  if (loop_->Now() + kConnectRetry >= connect_deadline_) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: cannot connect to rank {} at {} (channel {}): {}", options_.rank,
                    peer, addresses_[static_cast<size_t>(peer)], channel, why)));
    return;
  }
  spdlog::debug("rank {}: connect to rank {} failed ({}); retrying", options_.rank, peer, why);
  loop_->RunAfter(kConnectRetry, [this, peer, channel] {
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
    c->rbuf.resize(kReadBufferBytes);
    conns_[fd] = std::move(conn);
    Status st = loop_->AddFd(fd, EPOLLIN, [this, c](uint32_t ev) { OnConnEvent(c, ev); });
    if (!st.ok()) CloseConn(c, st.message());
  }
}

void TcpTransport::OnConnEvent(Conn* c, uint32_t events) {
  if (c->state == Conn::State::kConnecting) {
    FinishConnect(c);
    return;
  }
  if ((events & EPOLLIN) && c->peer >= 0) live_[static_cast<size_t>(c->peer)].heard = true;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ReadSome(c);
  if (c->state != Conn::State::kClosed && (events & EPOLLOUT)) Flush(c);
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
          options_.job_id.size(), static_cast<uint64_t>(options_.world_size), 0, kControl, 0);
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

std::optional<MessageMatcher::Posted> TcpTransport::TakePosted(const MatchKey& k) {
  auto p = matcher_.TakePosted(k);
  if (p && k.peer >= 0 && k.peer < options_.world_size) {
    --posted_count_[static_cast<size_t>(k.peer)][k.channel];
  }
  return p;
}

void TcpTransport::ReleaseUnexpected(Bytes bytes) {
  unexpected_bytes_ -= std::min(unexpected_bytes_, bytes);
  if (unexpected_bytes_ >= kUnexpectedCap) return;
  for (auto& [fd, c] : conns_) {
    if (c->paused) Resume(c.get());
  }
}

void TcpTransport::UpdateInterest(Conn* c) {
  uint32_t ev = (c->paused ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                (c->want_out ? static_cast<uint32_t>(EPOLLOUT) : 0u);
  (void)loop_->ModifyFd(c->fd, ev);
}

void TcpTransport::Resume(Conn* c) {
  c->paused = false;
  UpdateInterest(c);
  // Frames may already sit in the read buffer, where epoll cannot see them.
  int fd = c->fd;
  loop_->Post([this, fd, c] {
    auto it = conns_.find(fd);
    if (it != conns_.end() && it->second.get() == c && !c->paused) ReadSome(c);
  });
}

void TcpTransport::ReadSome(Conn* c) {
  size_t budget = kReadBudget;
  while (c->state != Conn::State::kClosed && budget > 0) {
    if (!c->in_payload && c->state == Conn::State::kOpen && unexpected_bytes_ >= kUnexpectedCap &&
        posted_count_[static_cast<size_t>(c->peer)][static_cast<size_t>(c->channel)] == 0) {
      // Flow control: the application is behind and nothing it waits for comes from this
      // connection; stop reading so TCP pushes back on the sender instead of memory growing.
      c->paused = true;
      UpdateInterest(c);
      return;
    }
    if (!c->in_payload) {
      if (c->rend - c->rpos >= kFrameHeaderBytes) {
        auto parsed = ParseFrame(c->rbuf.data() + c->rpos, ExpectationFor(c));
        if (!parsed.ok()) {
          CloseConn(c, "bad frame: " + parsed.status().message());
          return;
        }
        c->cur = *parsed;
        c->rpos += kFrameHeaderBytes;
        ++c->recv_seq;
        Status st = BeginPayload(c);
        if (!st.ok()) {
          CloseConn(c, st.message());
          return;
        }
        if (c->cur.length == 0) {
          st = FinishPayload(c);
          if (!st.ok()) {
            CloseConn(c, st.message());
            return;
          }
        }
        continue;
      }
      if (c->rpos > 0) {
        std::memmove(c->rbuf.data(), c->rbuf.data() + c->rpos, c->rend - c->rpos);
        c->rend -= c->rpos;
        c->rpos = 0;
      }
      ssize_t n = recv(c->fd, c->rbuf.data() + c->rend, c->rbuf.size() - c->rend, 0);
      if (n > 0) {
        c->rend += static_cast<size_t>(n);
        budget -= std::min(budget, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 && c->rend == 0 && (c->bye_received || c->state == Conn::State::kAwaitHello)) {
        // Orderly end after goodbye, or a stranger that left without a word.
        if (c->state == Conn::State::kAwaitHello) {
          spdlog::info("rank {}: connection from {} closed before its hello", options_.rank,
                       c->remote);
        }
        CloseConn(c, "");
        return;
      }
      CloseConn(
          c, n == 0 ? (c->rend > 0 ? "connection closed in the middle of a frame header"
                                   : "connection closed without goodbye (peer exited or crashed)")
                    : fmt::format("receive failed: {}", strerror(errno)));
      return;
    }
    // Payload.
    Bytes remaining = c->cur.length - c->got;
    size_t avail = c->rend - c->rpos;
    if (avail > 0) {
      size_t n = static_cast<size_t>(std::min<Bytes>(avail, remaining));
      if (c->target != nullptr) std::memcpy(c->target + c->got, c->rbuf.data() + c->rpos, n);
      c->rpos += n;
      c->got += n;
    } else {
      unsigned char* dst;
      size_t want;
      if (c->target == nullptr) {
        dst = scratch_.data();
        want = static_cast<size_t>(std::min<Bytes>(remaining, scratch_.size()));
      } else if (remaining >= c->rbuf.size() / 2) {
        dst = c->target + c->got;  // large: straight into place, no copy
        want = static_cast<size_t>(remaining);
      } else {
        dst = nullptr;  // small: through the read buffer, which may also catch the next header
        want = 0;
      }
      ssize_t n;
      if (dst != nullptr) {
        n = recv(c->fd, dst, want, 0);
        if (n > 0) c->got += static_cast<Bytes>(n);
      } else {
        c->rpos = c->rend = 0;
        n = recv(c->fd, c->rbuf.data(), c->rbuf.size(), 0);
        if (n > 0) c->rend = static_cast<size_t>(n);
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        CloseConn(c, n == 0 ? fmt::format("connection closed in the middle of a {}-byte {} frame",
                                          c->cur.length, TypeName(c->cur.type))
                            : fmt::format("receive failed: {}", strerror(errno)));
        return;
      }
      budget -= std::min(budget, static_cast<size_t>(n));
    }
    if (c->got == c->cur.length) {
      Status st = FinishPayload(c);
      if (!st.ok()) {
        CloseConn(c, st.message());
        return;
      }
    }
  }
}

Status TcpTransport::BeginPayload(Conn* c) {
  const FrameHeader& h = c->cur;
  c->got = 0;
  c->in_payload = h.length > 0;
  c->target = nullptr;
  auto wrong_state = [&] {
    return Status::Corruption(fmt::format("unexpected {} frame", TypeName(h.type)));
  };
  switch (h.type) {
    case FrameType::kHello:
      if (c->state != Conn::State::kAwaitHello) return wrong_state();
      c->dest = Conn::Dest::kText;
      c->text.assign(static_cast<size_t>(h.length), '\0');
      c->target = reinterpret_cast<unsigned char*>(c->text.data());
      return Status::Ok();
    case FrameType::kHelloAck:
      if (c->state != Conn::State::kAwaitAck) return wrong_state();
      return Status::Ok();
    case FrameType::kBye:
    case FrameType::kHeartbeat:
      if (c->state != Conn::State::kOpen) return wrong_state();
      return Status::Ok();
    case FrameType::kAbort:
      if (c->state != Conn::State::kOpen) return wrong_state();
      c->dest = Conn::Dest::kText;
      c->text.assign(static_cast<size_t>(h.length), '\0');
      c->target = reinterpret_cast<unsigned char*>(c->text.data());
      return Status::Ok();
    case FrameType::kWrite: {
      if (c->state != Conn::State::kOpen) return wrong_state();
      uint64_t key = h.tag;
      if (key == 0 || key > regions_.size() || h.offset > regions_[key - 1].second ||
          h.length > regions_[key - 1].second - h.offset) {
        return Status::Corruption(fmt::format(
            "one-sided write of {} bytes at offset {} of region {} is outside the registered "
            "memory",
            h.length, h.offset, key));
      }
      c->dest = Conn::Dest::kRegion;
      c->target = regions_[key - 1].first + h.offset;
      return Status::Ok();
    }
    case FrameType::kData: {
      if (c->state != Conn::State::kOpen) return wrong_state();
      MatchKey k{c->peer, h.channel, h.tag};
      if (auto p = TakePosted(k)) {
        if (p->bytes != h.length) {
          return Status::InvalidArgument(fmt::format(
              "rank {} sent {} bytes with tag {} on channel {} but rank {} posted a receive of {} "
              "bytes; the ranks' traces or schedules disagree",
              c->peer, h.length, h.tag, h.channel, options_.rank, p->bytes));
        }
        c->dest = Conn::Dest::kPosted;
        c->posted = *p;
        c->target = static_cast<unsigned char*>(p->into);
        return Status::Ok();
      }
      c->arrived.bytes = h.length;
      c->arrived.has_data = (h.flags & kFlagHasData) != 0;
      if (c->arrived.has_data && h.length > 0) {
        c->dest = Conn::Dest::kArrived;
        c->arrived.buf = matcher_.TakeBuffer(h.length);
        c->target = c->arrived.buf.get();
        unexpected_bytes_ += h.length;
      } else {
        c->dest = Conn::Dest::kDiscard;
      }
      return Status::Ok();
    }
  }
  return wrong_state();
}

Status TcpTransport::FinishPayload(Conn* c) {
  const FrameHeader& h = c->cur;
  c->in_payload = false;
  auto& ctr = counters_[static_cast<size_t>(c->peer >= 0 ? c->peer : h.src)];
  switch (h.type) {
    case FrameType::kHello: {
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
      c->peer = src;
      c->channel = h.channel;
      Enqueue(c, FrameType::kHelloAck, 0, h.channel, 0, nullptr, 0, 0, 0, kControl, 0);
      Established(c);
      return Status::Ok();
    }
    case FrameType::kHelloAck:
      Established(c);
      return Status::Ok();
    case FrameType::kBye:
      c->bye_received = true;
      MaybeFinishBye(c);
      return Status::Ok();
    case FrameType::kHeartbeat:
      return Status::Ok();  // it was heard: that is all (OnConnEvent noted it)
    case FrameType::kAbort:
      // The peer's reason is the news; its connection closing next is not.
      live_[static_cast<size_t>(c->peer)].done = true;
      ReportFatal(
          Status::Unavailable(fmt::format("rank {} stopped the job: {}", c->peer, c->text)));
      CloseConn(c, "");
      return Status::Ok();
    case FrameType::kWrite:
      ++ctr.writes_received;
      ctr.bytes_received += h.length;
      Complete({Completion::kRemoteWrite, c->peer, h.channel, h.tag, h.offset, h.length, h.imm});
      return Status::Ok();
    case FrameType::kData: {
      ++ctr.messages_received;
      ctr.bytes_received += h.length;
      if (c->dest == Conn::Dest::kPosted) {
        Complete({Completion::kRecv, c->peer, h.channel, c->posted.cookie, h.offset, h.length, 0});
        return Status::Ok();
      }
      MatchKey k{c->peer, h.channel, h.tag};
      // A receive may have been posted while the payload was streaming in.
      if (auto p = TakePosted(k)) {
        if (p->bytes != h.length) {
          return Status::InvalidArgument(fmt::format(
              "rank {} sent {} bytes with tag {} on channel {} but rank {} posted a receive of {} "
              "bytes; the ranks' traces or schedules disagree",
              c->peer, h.length, h.tag, h.channel, options_.rank, p->bytes));
        }
        if (p->into != nullptr && h.length > 0) {
          if (c->dest == Conn::Dest::kArrived) {
            std::memcpy(p->into, c->arrived.buf.get(), h.length);
          } else {
            std::memset(p->into, 0, h.length);
          }
        }
        if (c->dest == Conn::Dest::kArrived) ReleaseUnexpected(h.length);
        matcher_.ReturnBuffer(std::move(c->arrived.buf));
        Complete({Completion::kRecv, c->peer, h.channel, p->cookie, h.offset, h.length, 0});
        return Status::Ok();
      }
      c->arrived.remote_data = h.offset;
      matcher_.AddArrived(k, std::move(c->arrived));
      c->arrived = {};
      return Status::Ok();
    }
  }
  return Status::Corruption("unknown frame type");
}

void TcpTransport::Established(Conn* c) {
  if (c->state == Conn::State::kClosed) return;  // the ack could not be sent
  c->state = Conn::State::kOpen;
  by_peer_[static_cast<size_t>(c->peer)][static_cast<size_t>(c->channel)] = c;
  ++counters_[static_cast<size_t>(c->peer)].connections;
  ++established_;
  spdlog::debug("rank {}: connected to rank {} channel {} ({})", options_.rank, c->peer, c->channel,
                c->remote);
}

void TcpTransport::Enqueue(Conn* c, FrameType type, uint8_t flags, uint16_t channel, uint64_t tag,
                           const void* data, Bytes bytes, uint64_t offset, uint32_t imm, int kind,
                           uint64_t cookie) {
  FrameHeader h;
  h.type = type;
  h.flags = flags;
  h.job = job_hash_;
  h.src = static_cast<uint32_t>(options_.rank);
  h.dst = static_cast<uint32_t>(c->peer);
  h.channel = channel;
  h.imm = imm;
  h.tag = tag;
  h.seq = c->send_seq++;
  h.length = bytes;
  h.offset = offset;
  c->outq.emplace_back();
  OutFrame& f = c->outq.back();
  EncodeFrame(h, f.hdr);
  f.data = static_cast<const unsigned char*>(data);
  f.bytes = bytes;
  f.done = 0;
  f.kind = kind;
  f.cookie = cookie;
  f.type = type;
  if (c->outq.size() == 1 && c->state != Conn::State::kConnecting) Flush(c);
}

void TcpTransport::SetWantOut(Conn* c, bool want) {
  if (c->want_out == want) return;
  c->want_out = want;
  UpdateInterest(c);
}

void TcpTransport::Flush(Conn* c) {
  while (!c->outq.empty()) {
    iovec iov[kMaxIov];
    size_t n_iov = 0;
    for (auto it = c->outq.begin(); it != c->outq.end() && n_iov + 2 < kMaxIov; ++it) {
      Bytes off = it->done;
      if (off < kFrameHeaderBytes) {
        iov[n_iov++] = {it->hdr + off, kFrameHeaderBytes - off};
        off = kFrameHeaderBytes;
      }
      Bytes pos = off - kFrameHeaderBytes;  // payload bytes already sent
      if (it->data != nullptr) {
        if (pos < it->bytes)
          iov[n_iov++] = {const_cast<unsigned char*>(it->data) + pos, it->bytes - pos};
      } else {
        while (pos < it->bytes && n_iov < kMaxIov) {
          size_t chunk = static_cast<size_t>(std::min<Bytes>(it->bytes - pos, kZeroBytes));
          iov[n_iov++] = {const_cast<unsigned char*>(kZeros), chunk};
          pos += chunk;
        }
        if (pos < it->bytes) break;  // iov full mid-frame
      }
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n_iov;
    ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        SetWantOut(c, true);
        return;
      }
      CloseConn(c, fmt::format("send failed: {}", strerror(errno)));
      return;
    }
    if (n > 0 && c->peer >= 0) live_[static_cast<size_t>(c->peer)].sent = true;
    Bytes left = static_cast<Bytes>(n);
    while (left > 0 || (!c->outq.empty() &&
                        c->outq.front().done == kFrameHeaderBytes + c->outq.front().bytes)) {
      OutFrame& f = c->outq.front();
      Bytes need = kFrameHeaderBytes + f.bytes - f.done;
      Bytes take = std::min(need, left);
      f.done += take;
      left -= take;
      if (f.done < kFrameHeaderBytes + f.bytes) break;
      auto& ctr = counters_[static_cast<size_t>(c->peer)];
      if (f.kind == kSendKind) {
        ++ctr.messages_sent;
        ctr.bytes_sent += f.bytes;
        Complete({Completion::kSend, c->peer, 0, f.cookie, 0, f.bytes, 0});
      } else if (f.kind == kWriteKind) {
        ++ctr.writes_sent;
        ctr.bytes_sent += f.bytes;
        Complete({Completion::kWrite, c->peer, 0, f.cookie, 0, f.bytes, 0});
      } else if (f.type == FrameType::kBye) {
        c->bye_flushed = true;
      }
      c->outq.pop_front();
    }
  }
  SetWantOut(c, false);
  MaybeFinishBye(c);
}

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
      live_[static_cast<size_t>(c->peer)].done = true;  // reported once is enough
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

void TcpTransport::Complete(const Completion& done) {
  done_.push_back(done);
  if (!drain_posted_) {
    drain_posted_ = true;
    loop_->Post([this] { DrainCompletions(); });
  }
}

void TcpTransport::ReportFatal(Status status) {
  if (!first_fatal_seen_) {
    spdlog::error("{}", status.message());
    first_fatal_ = status;
  }
  first_fatal_seen_ = true;
  fatal_.push_back(std::move(status));
  if (!drain_posted_) {
    drain_posted_ = true;
    loop_->Post([this] { DrainCompletions(); });
  }
}

void TcpTransport::DrainCompletions() {
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

TcpTransport::Conn* TcpTransport::ConnFor(int peer, uint16_t channel, const char* op) {
  if (peer < 0 || peer >= options_.world_size || peer == options_.rank) {
    ReportFatal(Status::InvalidArgument(
        fmt::format("rank {}: {} to rank {}, which is not a peer in a world of {} ranks",
                    options_.rank, op, peer, options_.world_size)));
    return nullptr;
  }
  Conn* c = by_peer_[static_cast<size_t>(peer)][channel];
  if (c == nullptr || c->bye_queued) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: {} to rank {} channel {}, but that connection is closed",
                    options_.rank, op, peer, channel)));
    return nullptr;
  }
  return c;
}

void TcpTransport::DeliverToSelf(const SendOp& op, uint16_t ch) {
  MatchKey k{options_.rank, ch, op.tag};
  if (auto p = TakePosted(k)) {
    if (p->bytes != op.bytes) {
      ReportFatal(Status::InvalidArgument(fmt::format(
          "rank {} sent itself {} bytes with tag {} on channel {} but posted a receive of {} "
          "bytes; the schedule is inconsistent",
          options_.rank, op.bytes, op.tag, ch, p->bytes)));
      return;
    }
    if (p->into != nullptr && op.bytes > 0) {
      if (op.data != nullptr) {
        std::memcpy(p->into, op.data, op.bytes);
      } else {
        std::memset(p->into, 0, op.bytes);
      }
    }
    Complete({Completion::kRecv, options_.rank, ch, p->cookie, op.remote_data, op.bytes, 0});
  } else {
    MessageMatcher::Arrived a{op.bytes, op.data != nullptr, {}, op.remote_data};
    if (a.has_data && op.bytes > 0) {
      a.buf = matcher_.TakeBuffer(op.bytes);
      std::memcpy(a.buf.get(), op.data, op.bytes);
      unexpected_bytes_ += op.bytes;
    }
    matcher_.AddArrived(k, std::move(a));
  }
  Complete({Completion::kSend, options_.rank, ch, op.cookie, 0, op.bytes, 0});
}

void TcpTransport::PostSend(const SendOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  if (op.peer == options_.rank) {
    DeliverToSelf(op, ch);  // a schedule may address its own rank; no socket involved
    return;
  }
  Conn* c = ConnFor(op.peer, ch, "send");
  if (c == nullptr) return;
  Enqueue(c, FrameType::kData, op.data != nullptr ? kFlagHasData : 0, ch, op.tag, op.data, op.bytes,
          op.remote_data, 0, kSendKind, op.cookie);
}

void TcpTransport::PostRecv(const RecvOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  MatchKey k{op.peer, ch, op.tag};
  if (auto a = matcher_.TakeArrived(k)) {
    if (a->bytes != op.bytes) {
      ReportFatal(Status::InvalidArgument(fmt::format(
          "rank {} sent {} bytes with tag {} on channel {} but rank {} posted a receive of {} "
          "bytes; the ranks' traces or schedules disagree",
          op.peer, a->bytes, op.tag, ch, options_.rank, op.bytes)));
      return;
    }
    if (op.into != nullptr && op.bytes > 0) {
      if (a->has_data) {
        std::memcpy(op.into, a->buf.get(), op.bytes);
      } else {
        std::memset(op.into, 0, op.bytes);
      }
    }
    if (a->has_data && a->bytes > 0) ReleaseUnexpected(a->bytes);
    matcher_.ReturnBuffer(std::move(a->buf));
    Complete({Completion::kRecv, op.peer, ch, op.cookie, a->remote_data, op.bytes, 0});
    return;
  }
  matcher_.AddPosted(k, {op.into, op.bytes, op.cookie});
  if (op.peer >= 0 && op.peer < options_.world_size) {
    ++posted_count_[static_cast<size_t>(op.peer)][ch];
    // A paused connection may hold exactly this message: read it again.
    Conn* c = by_peer_[static_cast<size_t>(op.peer)][ch];
    if (c != nullptr && c->paused) Resume(c);
  }
}

Result<uint64_t> TcpTransport::RegisterRegion(void* base, Bytes bytes) {
  regions_.emplace_back(static_cast<unsigned char*>(base), bytes);
  return static_cast<uint64_t>(regions_.size());
}

void TcpTransport::PostWrite(const WriteOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  Conn* c = ConnFor(op.peer, ch, "one-sided write");
  if (c == nullptr) return;
  Enqueue(c, FrameType::kWrite, op.data != nullptr ? kFlagHasData : 0, ch, op.remote_key, op.data,
          op.bytes, op.remote_offset, op.imm, kWriteKind, op.cookie);
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
            abort_reason_.data(), abort_reason_.size(), 0, 0, kControl, 0);
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
    Enqueue(c, FrameType::kBye, 0, static_cast<uint16_t>(c->channel), 0, nullptr, 0, 0, 0, kControl,
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
