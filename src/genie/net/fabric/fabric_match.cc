// FabricTransport: matching. A message header meets its receive in net::MessageMatcher (the
// one place a size mismatch is found and worded, as over TCP); then its payload is received
// straight into the receive's buffer — fi_trecv of the tagged payload, or (RMA mode) a
// registered buffer and a clear-to-send answered by the sender's fi_writedata. A payload
// whose receive is not posted yet is received at once into an Early buffer, so the sender's
// send completes as over TCP. Loop thread only.
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

using namespace fabric_internal;

void FabricTransport::DeliverToSelf(const SendOp& op, uint16_t ch) {
  MatchKey k{options_.rank, ch, op.tag};
  auto posted =
      matcher_.ArriveWhole(options_.rank, k, op.data, op.bytes, op.remote_data, kInlineHandle);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    Complete({Done::kRecv, options_.rank, ch, p->cookie, op.remote_data, op.bytes, 0});
  }
  Complete({Done::kSend, options_.rank, ch, op.cookie, 0, op.bytes, 0});
}

void FabricTransport::PostRecv(const RecvOp& op) {
  const uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  if (op.peer < 0 || op.peer >= options_.world_size) {
    ReportFatal(Status::InvalidArgument(
        fmt::format("rank {}: receive from rank {}, which is not in a world of {} ranks",
                    options_.rank, op.peer, options_.world_size)));
    return;
  }
  MatchKey k{op.peer, ch, op.tag};
  auto arrived = matcher_.MatchPost(options_.rank, k, op.bytes);
  if (!arrived.ok()) {
    ReportFatal(arrived.status());
    return;
  }
  if (auto& a = *arrived) {
    if (a->handle == kInlineHandle) {
      const uint64_t remote_data = a->remote_data;
      matcher_.Deliver(std::move(*a), op.into, op.bytes);
      Complete({Done::kRecv, op.peer, ch, op.cookie, remote_data, op.bytes, 0});
    } else if ((a->handle & kEarlyHandle) != 0) {
      const int id = static_cast<int>(a->handle & ~kEarlyHandle);
      Early& e = *early_[static_cast<size_t>(id)];
      e.claimed = true;
      e.into = op.into;
      e.cookie = op.cookie;
      if (e.landed) DeliverEarly(id);
    } else {
      StartPayloadRecv(op.peer, ch, a->handle, op.into, op.bytes, op.cookie, a->remote_data);
    }
    return;
  }
  matcher_.AddPosted(k, {op.into, op.bytes, op.cookie});
}

void FabricTransport::OnData(int peer, const Header& h, const unsigned char* inline_data) {
  MatchKey k{peer, h.channel, h.tag};
  const bool has_data = (h.flags & kHasData) != 0;
  if ((h.flags & kInline) != 0) {
    // The whole message is here: the same path as a message to oneself.
    auto& ctr = counters_[static_cast<size_t>(peer)];
    ++ctr.messages_received;
    ctr.bytes_received += h.bytes;
    auto posted = matcher_.ArriveWhole(options_.rank, k, has_data ? inline_data : nullptr, h.bytes,
                                       h.aux, kInlineHandle);
    if (!posted.ok()) {
      ReportFatal(posted.status());
    } else if (const auto& p = *posted) {
      Complete({Done::kRecv, peer, h.channel, p->cookie, h.aux, h.bytes, 0});
    }
    return;
  }
  auto posted = matcher_.MatchArrival(options_.rank, k, h.bytes);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    StartPayloadRecv(peer, h.channel, h.seq, p->into, h.bytes, p->cookie, h.aux);
    return;
  }
  MessageMatcher::Arrived a{h.bytes, has_data, {}, h.aux, h.seq};
  if (!has_data || unexpected_bytes_ + h.bytes <= kUnexpectedCap) {
    // Take the payload now, so that its sender's send completes (see Early).
    int id;
    if (!free_early_.empty()) {
      id = free_early_.back();
      free_early_.pop_back();
    } else {
      id = static_cast<int>(early_.size());
      early_.push_back(std::make_unique<Early>());
    }
    Early& e = *early_[static_cast<size_t>(id)];
    e = Early{};
    e.peer = peer;
    e.channel = h.channel;
    e.bytes = h.bytes;
    e.remote_data = h.aux;
    e.has_data = has_data;
    if (has_data) {
      e.buf = matcher_.TakeBuffer(h.bytes);
      unexpected_bytes_ += h.bytes;
    }
    a.handle = kEarlyHandle | static_cast<uint64_t>(id);
    matcher_.AddArrived(k, std::move(a));
    StartPayloadRecv(peer, h.channel, h.seq, has_data ? e.buf.get() : nullptr, h.bytes, 0, h.aux,
                     id);
    return;
  }
  matcher_.AddArrived(k, std::move(a));
}

void FabricTransport::StartPayloadRecv(int peer, uint16_t channel, uint64_t seq, void* into,
                                       Bytes bytes, uint64_t cookie, uint64_t remote_data,
                                       int early) {
  if (ep_ == nullptr) return;
  ++recvs_in_flight_;
  void* dst = into != nullptr ? into : Scratch(bytes);
  if (dst == nullptr) {
    ReportFatal(Status::IoError(
        fmt::format("rank {}: cannot map {} bytes of scratch memory", options_.rank, bytes)));
    return;
  }
  if (!options_.fabric_rma) {
    Ctx* c = NewCtx(kPayloadRecv);
    c->peer = peer;
    c->channel = channel;
    c->cookie = cookie;
    c->bytes = bytes;
    c->remote_data = remote_data;
    c->early = early;
    void* desc = nullptr;
    Status st = LocalDesc(c, dst, bytes, FI_RECV, &desc);
    if (!st.ok()) {
      FreeCtx(c);
      ReportFatal(st);
      return;
    }
    const fi_addr_t src = (info_->caps & FI_DIRECTED_RECV) != 0
                              ? fi_addr_[static_cast<size_t>(peer)]
                              : FI_ADDR_UNSPEC;
    const uint64_t tag = PayloadTag(peer, seq);
    fid_ep* ep = ep_;
    Submit([=] { return static_cast<long>(fi_trecv(ep, dst, bytes, desc, src, tag, 0, c)); }, peer,
           "payload receive");
    return;
  }
  // RMA mode: expose the destination and tell the sender where to write.
  fid_mr* mr = nullptr;
  int rc = fi_mr_reg(domain_, dst, bytes, FI_REMOTE_WRITE, 0, mr_prov_key_ ? 0 : next_key_++, 0,
                     &mr, nullptr);
  if (rc != 0) {
    ReportFatal(Status::IoError(fmt::format(
        "rank {}: fi_mr_reg of a {}-byte receive buffer for rank {} on provider '{}': {} "
        "(check ulimit -l and the provider's MR limits)",
        options_.rank, bytes, peer, provider_, FiError(rc))));
    return;
  }
  uint32_t id;
  if (!free_rma_.empty()) {
    id = free_rma_.back();
    free_rma_.pop_back();
  } else {
    id = static_cast<uint32_t>(rma_recvs_.size());
    rma_recvs_.emplace_back();
  }
  rma_recvs_[id] = RmaRecv{peer, channel, cookie, bytes, remote_data, mr, true, early};
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = kCts;
  h->channel = channel;
  h->tag = id;
  h->seq = seq;
  h->bytes = bytes;
  h->aux = mr_virt_addr_ ? reinterpret_cast<uint64_t>(dst) : 0;
  h->aux2 = fi_mr_key(mr);
  SendCtrl(peer, s, 0);
}

void FabricTransport::OnCts(int peer, const Header& h) {
  auto it = pending_rma_.find(RmaKey(peer, h.seq));
  if (it == pending_rma_.end() || it->second.bytes != h.bytes) {
    ReportFatal(Status::InvalidArgument(fmt::format(
        "rank {}: rank {} is ready for message {} ({} bytes), which this rank has not sent",
        options_.rank, peer, h.seq, h.bytes)));
    return;
  }
  const PendingRma p = it->second;
  pending_rma_.erase(it);
  Ctx* c = NewCtx(kRmaSend);
  c->peer = peer;
  c->channel = p.channel;
  c->cookie = p.cookie;
  c->bytes = p.bytes;
  const void* src = p.data != nullptr ? p.data : Zeros(p.bytes);
  void* desc = nullptr;
  Status st = LocalDesc(c, src, p.bytes, FI_WRITE, &desc);
  if (!st.ok()) {
    FreeCtx(c);
    ReportFatal(st);
    return;
  }
  ++sends_in_flight_;
  liveness_.Sent(peer);
  const fi_addr_t dest = fi_addr_[static_cast<size_t>(peer)];
  const uint64_t addr = h.aux, key = h.aux2, data = h.tag;
  const Bytes bytes = p.bytes;
  fid_ep* ep = ep_;
  Submit(
      [=] {
        return static_cast<long>(fi_writedata(ep, src, bytes, desc, data, dest, addr, key, c));
      },
      peer, "one-sided payload write");
}

void FabricTransport::OnRemoteCqData(uint64_t data) {
  if ((data & kUserWriteData) != 0) return;  // a PostWrite: its notice follows
  const uint32_t id = static_cast<uint32_t>(data);
  if (id >= rma_recvs_.size() || !rma_recvs_[id].used) {
    ReportFatal(Status::Internal(
        fmt::format("rank {}: a remote write completed for receive slot {}, which is not in use",
                    options_.rank, id)));
    return;
  }
  RmaRecv r = rma_recvs_[id];
  if (r.mr != nullptr) fi_close(&r.mr->fid);
  rma_recvs_[id] = RmaRecv{};
  free_rma_.push_back(id);
  PayloadLanded(r.peer, r.channel, r.cookie, r.bytes, r.remote_data, r.early);
}

void FabricTransport::PayloadLanded(int peer, uint16_t channel, uint64_t cookie, Bytes bytes,
                                    uint64_t remote_data, int early) {
  --recvs_in_flight_;
  auto& ctr = counters_[static_cast<size_t>(peer)];
  ++ctr.messages_received;
  ctr.bytes_received += bytes;
  liveness_.Heard(peer);
  if (early < 0) {
    Complete({Done::kRecv, peer, channel, cookie, remote_data, bytes, 0});
    return;
  }
  Early& e = *early_[static_cast<size_t>(early)];
  e.landed = true;
  if (e.claimed) DeliverEarly(early);
}

void FabricTransport::DeliverEarly(int early) {
  Early& e = *early_[static_cast<size_t>(early)];
  if (e.into != nullptr && e.bytes > 0) {
    if (e.has_data) {
      std::memcpy(e.into, e.buf.get(), e.bytes);
    } else {
      std::memset(e.into, 0, e.bytes);
    }
  }
  if (e.has_data) unexpected_bytes_ -= std::min(unexpected_bytes_, e.bytes);
  matcher_.ReturnBuffer(std::move(e.buf));
  Complete({Done::kRecv, e.peer, e.channel, e.cookie, e.remote_data, e.bytes, 0});
  e = Early{};
  free_early_.push_back(early);
}

}  // namespace genie::net
