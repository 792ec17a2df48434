// TcpTransport: the read state machine (frame header, then payload straight into its
// destination) and the write path (frames queued per connection, sent with sendmsg from the
// callers' buffers or one shared zero run).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

namespace tcp_internal {

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

}  // namespace tcp_internal

namespace {

using tcp_internal::kReadBudget;
using tcp_internal::kUnexpectedCap;

constexpr size_t kZeroBytes = 1 << 20;
// Filler for messages without data: one shared zero page run, never written.
alignas(64) const unsigned char kZeros[kZeroBytes] = {};
constexpr size_t kMaxIov = 64;

}  // namespace

void TcpTransport::OnConnEvent(Conn* c, uint32_t events) {
  if (c->state == Conn::State::kConnecting) {
    FinishConnect(c);
    return;
  }
  if ((events & EPOLLIN) && c->peer >= 0) heartbeats_.liveness().Heard(c->peer);
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) ReadSome(c);
  if (c->state != Conn::State::kClosed && (events & EPOLLOUT)) Flush(c);
}


void TcpTransport::UpdateInterest(Conn* c) {
  uint32_t ev = (c->paused ? 0u : static_cast<uint32_t>(EPOLLIN)) |
                (c->want_out ? static_cast<uint32_t>(EPOLLOUT) : 0u);
  (void)loop_->ModifyFd(c->fd, ev);
}

void TcpTransport::PayloadMoved(Conn* c, Bytes n) {
  // Messages and writes only: a hello's or an abort's text is not the run's progress.
  if (c->peer < 0 || (c->cur.type != FrameType::kData && c->cur.type != FrameType::kWrite)) return;
  counters_[static_cast<size_t>(c->peer)].wire_bytes_received += n;
}

void TcpTransport::ReadSome(Conn* c) {
  size_t budget = kReadBudget;
  while (c->state != Conn::State::kClosed && budget > 0) {
    if (!c->in_payload && c->state == Conn::State::kOpen && unexpected_bytes_ >= kUnexpectedCap &&
        matcher_.PostedOn(c->peer, static_cast<uint16_t>(c->channel)) == 0) {
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
      PayloadMoved(c, n);
    } else {
      unsigned char* dst;
      size_t want;
      int flags = 0;
      if (c->target == nullptr) {
        // A payload nobody reads (a run without --verify): MSG_TRUNC has TCP drop it in the
        // kernel instead of copying it out, saving CPU that 8 ranks at 1 Gbit/s on a small
        // machine need for the wire. `want` stays within scratch_ all the same.
        dst = scratch_.data();
        want = static_cast<size_t>(std::min<Bytes>(remaining, scratch_.size()));
        flags = MSG_TRUNC;
      } else if (remaining >= c->rbuf.size() / 2) {
        dst = c->target + c->got;  // large: straight into place, no copy
        want = static_cast<size_t>(remaining);
      } else {
        dst = nullptr;  // small: through the read buffer, which may also catch the next header
        want = 0;
      }
      ssize_t n;
      if (dst != nullptr) {
        n = recv(c->fd, dst, want, flags);
        if (n > 0) {
          c->got += static_cast<Bytes>(n);
          PayloadMoved(c, static_cast<Bytes>(n));
        }
      } else {
        c->rpos = c->rend = 0;
        n = recv(c->fd, c->rbuf.data(), c->rbuf.size(), 0);
        if (n > 0) c->rend = static_cast<size_t>(n);
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        CloseConn(c, n == 0 ? fmt::format("connection closed in the middle of a {}-byte {} frame",
                                          c->cur.length, tcp_internal::TypeName(c->cur.type))
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
    return Status::Corruption(fmt::format("unexpected {} frame", tcp_internal::TypeName(h.type)));
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
    case FrameType::kData:
      if (c->state != Conn::State::kOpen) return wrong_state();
      return BeginData(c);
  }
  return wrong_state();
}

Status TcpTransport::FinishPayload(Conn* c) {
  const FrameHeader& h = c->cur;
  c->in_payload = false;
  auto& ctr = counters_[static_cast<size_t>(c->peer >= 0 ? c->peer : h.src)];
  switch (h.type) {
    case FrameType::kHello:
      return OnHello(c, h);
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
      heartbeats_.liveness().Done(c->peer);
      ReportFatal(
          Status::Unavailable(fmt::format("rank {} stopped the job: {}", c->peer, c->text)));
      CloseConn(c, "");
      return Status::Ok();
    case FrameType::kWrite:
      ++ctr.writes_received;
      ctr.bytes_received += h.length;
      Complete({Completion::kRemoteWrite, c->peer, h.channel, h.tag, h.offset, h.length, h.imm});
      return Status::Ok();
    case FrameType::kData:
      return FinishData(c);
  }
  return Status::Corruption("unknown frame type");
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
    if (n > 0 && c->peer >= 0) heartbeats_.liveness().Sent(c->peer);
    Bytes left = static_cast<Bytes>(n);
    while (left > 0 || (!c->outq.empty() &&
                        c->outq.front().done == kFrameHeaderBytes + c->outq.front().bytes)) {
      OutFrame& f = c->outq.front();
      Bytes need = kFrameHeaderBytes + f.bytes - f.done;
      Bytes take = std::min(need, left);
      if (f.kind != tcp_internal::kControl && f.done + take > kFrameHeaderBytes) {
        // The payload part of what left, as it leaves: a long message shows progress.
        counters_[static_cast<size_t>(c->peer)].wire_bytes_sent +=
            f.done + take - std::max<Bytes>(f.done, kFrameHeaderBytes);
      }
      f.done += take;
      left -= take;
      if (f.done < kFrameHeaderBytes + f.bytes) break;
      auto& ctr = counters_[static_cast<size_t>(c->peer)];
      if (f.kind == tcp_internal::kSendKind) {
        ++ctr.messages_sent;
        ctr.bytes_sent += f.bytes;
        Complete({Completion::kSend, c->peer, 0, f.cookie, 0, f.bytes, 0});
      } else if (f.kind == tcp_internal::kWriteKind) {
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

}  // namespace genie::net
