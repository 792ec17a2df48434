// TcpTransport: tag matching of data frames (through MessageMatcher, where a size mismatch is
// found and worded in one place) and flow control — while more than kUnexpectedCap bytes of
// unexpected payload wait, connections with no receive posted are not read, so TCP pushes
// back on senders instead of memory growing.
#include <cstring>

#include "genie/net/tcp/tcp_conn.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net {

using tcp_internal::kUnexpectedCap;

void TcpTransport::PostRecv(const RecvOp& op) {
  uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  MatchKey k{op.peer, ch, op.tag};
  auto arrived = matcher_.MatchPost(options_.rank, k, op.bytes);
  if (!arrived.ok()) {
    ReportFatal(arrived.status());
    return;
  }
  if (auto& a = *arrived) {
    const Bytes held = a->has_data ? a->bytes : 0;
    const uint64_t remote_data = a->remote_data;
    matcher_.Deliver(std::move(*a), op.into, op.bytes);
    if (held > 0) ReleaseUnexpected(held);
    Complete({Completion::kRecv, op.peer, ch, op.cookie, remote_data, op.bytes, 0});
    return;
  }
  matcher_.AddPosted(k, {op.into, op.bytes, op.cookie});
  if (op.peer >= 0 && op.peer < options_.world_size) {
    // A paused connection may hold exactly this message: read it again.
    Conn* c = by_peer_[static_cast<size_t>(op.peer)][ch];
    if (c != nullptr && c->paused) Resume(c);
  }
}

void TcpTransport::DeliverToSelf(const SendOp& op, uint16_t ch) {
  MatchKey k{options_.rank, ch, op.tag};
  auto posted = matcher_.ArriveWhole(options_.rank, k, op.data, op.bytes, op.remote_data);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    Complete({Completion::kRecv, options_.rank, ch, p->cookie, op.remote_data, op.bytes, 0});
  } else if (op.data != nullptr) {
    unexpected_bytes_ += op.bytes;  // held in the matcher until its receive is posted
  }
  Complete({Completion::kSend, options_.rank, ch, op.cookie, 0, op.bytes, 0});
}

Status TcpTransport::BeginData(Conn* c) {
  const FrameHeader& h = c->cur;
  MatchKey k{c->peer, h.channel, h.tag};
  GENIE_ASSIGN_OR_RETURN(auto posted, matcher_.MatchArrival(options_.rank, k, h.length));
  if (posted) {
    c->dest = Conn::Dest::kPosted;
    c->posted = *posted;
    c->target = static_cast<unsigned char*>(posted->into);
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

Status TcpTransport::FinishData(Conn* c) {
  const FrameHeader& h = c->cur;
  auto& ctr = counters_[static_cast<size_t>(c->peer)];
  ++ctr.messages_received;
  ctr.bytes_received += h.length;
  if (c->dest == Conn::Dest::kPosted) {
    Complete({Completion::kRecv, c->peer, h.channel, c->posted.cookie, h.offset, h.length, 0});
    return Status::Ok();
  }
  MatchKey k{c->peer, h.channel, h.tag};
  // A receive may have been posted while the payload was streaming in.
  GENIE_ASSIGN_OR_RETURN(auto posted, matcher_.MatchArrival(options_.rank, k, h.length));
  c->arrived.remote_data = h.offset;
  if (posted) {
    const bool held = c->dest == Conn::Dest::kArrived;
    matcher_.Deliver(std::move(c->arrived), posted->into, h.length);
    c->arrived = {};
    if (held) ReleaseUnexpected(h.length);
    Complete({Completion::kRecv, c->peer, h.channel, posted->cookie, h.offset, h.length, 0});
    return Status::Ok();
  }
  matcher_.AddArrived(k, std::move(c->arrived));
  c->arrived = {};
  return Status::Ok();
}

void TcpTransport::ReleaseUnexpected(Bytes bytes) {
  unexpected_bytes_ -= std::min(unexpected_bytes_, bytes);
  if (unexpected_bytes_ >= kUnexpectedCap) return;
  for (auto& [fd, c] : conns_) {
    if (c->paused) Resume(c.get());
  }
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

}  // namespace genie::net
