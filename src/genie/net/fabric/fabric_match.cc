// FabricTransport: matching. A message header meets its receive in net::MessageMatcher (the
// one place a size mismatch is found and worded, as over TCP); its payload lands straight in
// the receive's buffer, offered to the sender with a clear-to-send — ahead of the header when
// the receive came first (kCtsAhead), else in answer to it (kCts) — as a posted fi_trecv
// (tagged mode) or a registered buffer for fi_writedata (RMA mode). A payload whose receive
// is not posted yet is received at once into an Early buffer, so the sender's send completes
// as over TCP. Loop thread only.
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

using namespace fabric_internal;

int fabric_internal::CreditSlots() {
  static const int slots = static_cast<int>(EnvKnob("GENIE_FABRIC_CREDITS", 4));
  return slots;
}

void FabricTransport::DeliverToSelf(const SendOp& op, uint16_t ch) {
  MatchKey k{options_.rank, ch, op.tag};
  auto posted =
      matcher_.ArriveWhole(options_.rank, k, op.data, op.bytes, op.remote_data, kInlineHandle);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    Complete({Completion::kRecv, options_.rank, ch, p->cookie, op.remote_data, op.bytes, 0});
  }
  Complete({Completion::kSend, options_.rank, ch, op.cookie, 0, op.bytes, 0});
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
      Complete({Completion::kRecv, op.peer, ch, op.cookie, remote_data, op.bytes, 0});
    } else if ((a->handle & kEarlyHandle) != 0) {
      const int id = static_cast<int>(a->handle & ~kEarlyHandle);
      Early& e = *early_[static_cast<size_t>(id)];
      e.claimed = true;
      e.into = op.into;
      e.cookie = op.cookie;
      if (e.landed) DeliverEarly(id);
    } else if (auto t = early_by_seq_.find(RmaKey(op.peer, a->handle)); t != early_by_seq_.end()) {
      // TakeEarly took it: as above.
      const int id = t->second;
      early_by_seq_.erase(t);
      Early& e = *early_[static_cast<size_t>(id)];
      e.claimed = true;
      e.into = op.into;
      e.cookie = op.cookie;
      if (e.landed) DeliverEarly(id);
    } else {
      early_pending_.erase(RmaKey(op.peer, a->handle));
      StartPayloadRecv(op.peer, ch, a->handle, op.into, op.bytes, op.cookie, a->remote_data);
    }
    return;
  }
  matcher_.AddPosted(k, {op.into, op.bytes, op.cookie});
  OfferAhead(k, op.into, op.bytes, op.cookie);
}

bool FabricTransport::OfferAhead(const MatchKey& k, void* into, Bytes bytes, uint64_t cookie) {
  // Inline-sized messages need no buffer; a receive from oneself, a stranger or a lost peer
  // gets no offer (its header, if any, is handled as before).
  const size_t pi = static_cast<size_t>(k.peer);
  if (bytes <= kInlineBytes || k.peer == options_.rank || ep_ == nullptr || lost_[pi] ||
      (!is_peer_.empty() && !is_peer_[pi]) || fi_addr_[pi] == FI_ADDR_UNSPEC) {
    return false;
  }
  uint64_t addr = 0, key = 0;
  const int id = OpenSlot(k.peer, k.channel, into, bytes, cookie, 0, -1, true, &addr, &key);
  if (id < 0) return false;
  ahead_recvs_[k].emplace_back(cookie, static_cast<uint32_t>(id));
  ++stats_.offers;
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return false;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = kCtsAhead;
  h->channel = k.channel;
  h->tag = k.tag;
  h->seq = static_cast<uint64_t>(id);
  h->bytes = bytes;
  h->aux = addr;
  h->aux2 = key;
  h->aux3 = headers_seen_[pi];
  SendCtrl(k.peer, s, 0);
  return true;
}

void FabricTransport::OnData(int peer, const Header& h, const unsigned char* inline_data) {
  MatchKey k{peer, h.channel, h.tag};
  const bool has_data = (h.flags & kHasData) != 0;
  uint64_t& seen = headers_seen_[static_cast<size_t>(peer)];
  seen = std::max(seen, h.seq + 1);
  if ((h.flags & kCredited) != 0) {
    OnCreditData(peer, h);
    return;
  }
  if ((h.flags & kInline) != 0) {
    // The whole message is here: the same path as a message to oneself.
    auto& ctr = counters_[static_cast<size_t>(peer)];
    ++ctr.messages_received;
    ctr.bytes_received += h.bytes;
    ctr.wire_bytes_received += h.bytes;
    auto posted = matcher_.ArriveWhole(options_.rank, k, has_data ? inline_data : nullptr, h.bytes,
                                       h.aux, kInlineHandle);
    if (!posted.ok()) {
      ReportFatal(posted.status());
    } else if (const auto& p = *posted) {
      Complete({Completion::kRecv, peer, h.channel, p->cookie, h.aux, h.bytes, 0});
    }
    return;
  }
  auto posted = matcher_.MatchArrival(options_.rank, k, h.bytes);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    auto it = ahead_recvs_.find(k);
    if (it != ahead_recvs_.end() && !it->second.empty() && it->second.front().first == p->cookie) {
      // Its buffer was offered ahead: the payload comes (or came) into that slot.
      const uint32_t id = it->second.front().second;
      it->second.pop_front();
      if (it->second.empty()) ahead_recvs_.erase(it);
      if ((h.flags & kAhead) != 0 && h.aux2 != id) {
        ReportFatal(Status::Internal(fmt::format(
            "rank {}: rank {} sent message {} (tag {}, channel {}) into receive slot {}, but "
            "this rank paired it with slot {} (a bug in the fabric transport's offer order)",
            options_.rank, peer, h.seq, h.tag, h.channel, h.aux2, id)));
        return;
      }
      RecvSlot& r = rx_slots_[id];
      r.header_seen = true;
      r.remote_data = h.aux;
      ++recvs_in_flight_;
      if (r.landed) SlotLanded(id);
      return;
    }
    StartPayloadRecv(peer, h.channel, h.seq, p->into, h.bytes, p->cookie, h.aux);
    return;
  }
  // Unmatched: the payload waits at the sender; TakeEarly takes it into an Early buffer unless
  // a receive comes first. The sender's next messages should not wait: open its credit window.
  matcher_.AddArrived(k, MessageMatcher::Arrived{h.bytes, has_data, {}, h.aux, h.seq});
  OfferCredits(peer, h.bytes, has_data);
  const uint64_t key = RmaKey(peer, h.seq);
  early_pending_[key] = 1;
  early_candidates_.push_back({peer, h.channel, h.seq, h.bytes, h.aux, has_data});
  if (!early_task_posted_) {
    early_task_posted_ = true;
    std::weak_ptr<bool> alive = alive_;
    loop_->Post([this, alive] {
      if (alive.expired() || !*alive.lock()) return;
      early_task_posted_ = false;
      TakeEarly();
    });
  }
}

int FabricTransport::NewEarly(int peer, uint64_t seq, uint16_t channel, Bytes bytes,
                              uint64_t remote_data, bool has_data) {
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
  e.seq = seq;
  e.channel = channel;
  e.bytes = bytes;
  e.remote_data = remote_data;
  e.has_data = has_data;
  return id;
}

void FabricTransport::TakeEarly() {
  std::vector<EarlyCandidate> candidates;
  candidates.swap(early_candidates_);
  for (const EarlyCandidate& c : candidates) {
    const uint64_t key = RmaKey(c.peer, c.seq);
    auto pend = early_pending_.find(key);
    if (pend == early_pending_.end()) continue;  // its receive came: received directly
    if (ep_ == nullptr || lost_[static_cast<size_t>(c.peer)]) {
      early_pending_.erase(pend);
      continue;
    }
    if (c.has_data && unexpected_bytes_ + c.bytes > fabric_internal::kUnexpectedCap) {
      // Beyond the cap the payload stays with its sender until its receive is posted.
      early_pending_.erase(pend);
      continue;
    }
    early_pending_.erase(pend);
    const int id = NewEarly(c.peer, c.seq, c.channel, c.bytes, c.remote_data, c.has_data);
    Early& e = *early_[static_cast<size_t>(id)];
    if (c.has_data) {
      e.buf = matcher_.TakeBuffer(c.bytes);
      e.held = c.bytes;
      unexpected_bytes_ += c.bytes;
    }
    early_by_seq_[key] = id;
    StartPayloadRecv(c.peer, c.channel, c.seq, c.has_data ? e.buf.get() : nullptr, c.bytes, 0,
                     c.remote_data, id);
  }
}

int FabricTransport::OpenSlot(int peer, uint16_t channel, void* into, Bytes bytes, uint64_t cookie,
                              uint64_t remote_data, int early, bool ahead, uint64_t* addr,
                              uint64_t* key) {
  *addr = 0;
  *key = 0;
  void* dst = into != nullptr ? into : Scratch(bytes);
  if (dst == nullptr) {
    ReportFatal(Status::IoError(
        fmt::format("rank {}: cannot map {} bytes of scratch memory", options_.rank, bytes)));
    return -1;
  }
  uint32_t id;
  if (!free_rx_slots_.empty()) {
    id = free_rx_slots_.back();
    free_rx_slots_.pop_back();
  } else {
    id = static_cast<uint32_t>(rx_slots_.size());
    rx_slots_.emplace_back();
  }
  RecvSlot& r = rx_slots_[id];
  r = RecvSlot{};
  r.peer = peer;
  r.channel = channel;
  r.cookie = cookie;
  r.bytes = bytes;
  r.remote_data = remote_data;
  r.used = true;
  r.ahead = ahead;
  r.early = early;
  r.segment = SegmentSize(bytes);
  r.segments = SegmentCount(bytes, r.segment);
  if (!options_.fabric_rma) {
    if (id >> kSlotBits != 0) {
      r = RecvSlot{};
      free_rx_slots_.push_back(id);
      ReportFatal(Status::Unsupported(fmt::format(
          "rank {}: more than {} payload receives open at once (rank {}'s included)", options_.rank,
          uint64_t{1} << kSlotBits, peer)));
      return -1;
    }
    // The first segments' fi_trecvs are posted before the clear-to-send leaves (Submit keeps
    // the order), so the payload does not arrive unexpected.
    r.dst = static_cast<unsigned char*>(dst);
    PostSegments(id);
    return static_cast<int>(id);
  }
  // RMA mode: expose the destination for the sender's write.
  int rc = fi_mr_reg(domain_, dst, bytes, FI_REMOTE_WRITE, 0, mr_prov_key_ ? 0 : next_key_++, 0,
                     &r.mr, nullptr);
  if (rc != 0) {
    r = RecvSlot{};
    free_rx_slots_.push_back(id);
    ReportFatal(Status::IoError(fmt::format(
        "rank {}: fi_mr_reg of a {}-byte receive buffer for rank {} on provider '{}': {} "
        "(check ulimit -l and the provider's MR limits)",
        options_.rank, bytes, peer, provider_, FiError(rc))));
    return -1;
  }
  *addr = mr_virt_addr_ ? reinterpret_cast<uint64_t>(dst) : 0;
  *key = fi_mr_key(r.mr);
  return static_cast<int>(id);
}

void FabricTransport::StartPayloadRecv(int peer, uint16_t channel, uint64_t seq, void* into,
                                       Bytes bytes, uint64_t cookie, uint64_t remote_data,
                                       int early) {
  if (ep_ == nullptr) return;
  uint64_t addr = 0, key = 0;
  const int id =
      OpenSlot(peer, channel, into, bytes, cookie, remote_data, early, false, &addr, &key);
  if (id < 0) return;
  ++recvs_in_flight_;
  rx_slots_[static_cast<size_t>(id)].header_seen = true;
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = kCts;
  ++stats_.cts_replies;
  h->channel = channel;
  h->tag = static_cast<uint64_t>(id);
  h->seq = seq;
  h->bytes = bytes;
  h->aux = addr;
  h->aux2 = key;
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
  int& crossings = crossings_[static_cast<size_t>(peer)];
  crossings = std::max(crossings - 1, -kMaxCrossings);  // it waited: credits would have helped
  const MatchKey k{peer, p.channel, p.tag};
  if (auto w = unresolved_.find(k); w != unresolved_.end()) {
    auto& q = w->second;
    if (auto i = std::find(q.begin(), q.end(), h.seq); i != q.end()) q.erase(i);
    if (q.empty()) unresolved_.erase(w);
  }
  SendPayload(peer, p, h.tag, h.bytes, h.aux, h.aux2);
}

void FabricTransport::OnCtsAhead(int peer, const Header& h) {
  const MatchKey k{peer, h.channel, h.tag};
  // Offers and messages on a key pair up in order. Messages sent without an offer whose header
  // the receiver had when it made this one (sequence number below h.aux3) were matched without
  // one; the first after them, if sent, crossed this offer and is the one it is for.
  auto w = unresolved_.find(k);
  if (w != unresolved_.end()) {
    auto& q = w->second;
    while (!q.empty() && (q.front() & kSeqMask) < (h.aux3 & kSeqMask)) q.pop_front();
    if (q.empty()) {
      unresolved_.erase(w);
      w = unresolved_.end();
    }
  }
  if (w == unresolved_.end()) {
    // No message on this key yet: the next PostSend on it uses the offer.
    ahead_cts_[k].push_back({h.seq, h.bytes, h.aux, h.aux2});
    return;
  }
  const uint64_t seq = w->second.front();
  auto it = pending_rma_.find(RmaKey(peer, seq));
  if (it == pending_rma_.end()) {
    // It went into a credit: the receiver takes it from there and withdraws this offer.
    w->second.pop_front();
    if (w->second.empty()) unresolved_.erase(w);
    ++stats_.offers_dropped;
    int& crossings = crossings_[static_cast<size_t>(peer)];
    crossings = std::min(crossings + 1, kMaxCrossings);
    return;
  }
  if (it->second.bytes != h.bytes) return;  // the receiver names the mismatch from the header
  w->second.pop_front();
  if (w->second.empty()) unresolved_.erase(w);
  int& crossings = crossings_[static_cast<size_t>(peer)];
  crossings = std::min(crossings + 1, kMaxCrossings);
  const PendingRma p = it->second;
  pending_rma_.erase(it);
  ++stats_.sent_crossed;
  SendPayload(peer, p, h.seq, h.bytes, h.aux, h.aux2);
}

void FabricTransport::OnRemoteCqData(uint64_t data, Bytes len) {
  if ((data & kUserWriteData) != 0) return;  // a PostWrite: its notice follows
  const uint32_t id = static_cast<uint32_t>(data);
  if (id >= rx_slots_.size() || !rx_slots_[id].used ||
      rx_slots_[id].landed_segments == rx_slots_[id].segments) {
    ReportFatal(Status::Internal(
        fmt::format("rank {}: a remote write completed for receive slot {}, which is not in use",
                    options_.rank, id)));
    return;
  }
  SegmentLanded(id, len);
}

void FabricTransport::PostSegments(uint32_t id) {
  RecvSlot& r = rx_slots_[id];
  const int peer = r.peer;
  const fi_addr_t src = (info_->caps & FI_DIRECTED_RECV) != 0 ? fi_addr_[static_cast<size_t>(peer)]
                                                              : FI_ADDR_UNSPEC;
  fid_ep* ep = ep_;
  while (ep != nullptr && r.posted < kSegmentWindow && r.next_segment < r.segments) {
    const uint64_t i = r.next_segment;
    const Bytes off = i * r.segment;
    const Bytes len = std::min<Bytes>(r.segment, r.bytes - off);
    unsigned char* to = r.dst + off;
    Ctx* c = NewCtx(kPayloadRecv);
    c->peer = peer;
    c->channel = r.channel;
    c->bytes = len;
    c->slot = static_cast<int>(id);
    void* desc = nullptr;
    if (Status st = LocalDesc(c, to, len, FI_RECV, &desc); !st.ok()) {
      FreeCtx(c);
      ReportFatal(st);
      return;
    }
    ++r.next_segment;
    ++r.posted;
    r.ctxs[i % kSegmentWindow] = c;
    const uint64_t tag = PayloadTag(peer, id, i);
    Submit([=] { return static_cast<long>(fi_trecv(ep, to, len, desc, src, tag, 0, c)); }, peer,
           "payload receive");
  }
}

void FabricTransport::SegmentLanded(uint32_t id, Bytes len) {
  RecvSlot& r = rx_slots_[id];
  if (len == 0) {
    // The provider did not say (RMA mode): every segment but the last is full.
    len = std::min<Bytes>(r.segment, r.bytes - std::min(r.bytes, r.arrived));
  }
  r.arrived += len;
  counters_[static_cast<size_t>(r.peer)].wire_bytes_received += len;
  heartbeats_.liveness().Heard(r.peer);
  if (++r.landed_segments == r.segments) {
    SlotLanded(id);
  } else if (!options_.fabric_rma) {
    PostSegments(id);
  }
}

void FabricTransport::SlotLanded(uint32_t id) {
  RecvSlot& slot = rx_slots_[id];
  slot.landed = true;
  if (!slot.header_seen) return;  // offered ahead: completes when its header comes
  RecvSlot r = slot;
  if (r.mr != nullptr) fi_close(&r.mr->fid);
  slot = RecvSlot{};
  free_rx_slots_.push_back(id);
  PayloadLanded(r.peer, r.channel, r.cookie, r.bytes, r.remote_data, r.early);
}

void FabricTransport::PayloadLanded(int peer, uint16_t channel, uint64_t cookie, Bytes bytes,
                                    uint64_t remote_data, int early) {
  --recvs_in_flight_;
  auto& ctr = counters_[static_cast<size_t>(peer)];
  ++ctr.messages_received;
  ctr.bytes_received += bytes;  // wire_bytes_received counted its segments as they landed
  heartbeats_.liveness().Heard(peer);
  if (early < 0) {
    Complete({Completion::kRecv, peer, channel, cookie, remote_data, bytes, 0});
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
  Bytes& held = e.from_credit ? credit_bytes_ : unexpected_bytes_;
  held -= std::min(held, e.held);
  matcher_.ReturnBuffer(std::move(e.buf));
  Complete({Completion::kRecv, e.peer, e.channel, e.cookie, e.remote_data, e.bytes, 0});
  e = Early{};
  free_early_.push_back(early);
}

void FabricTransport::OfferCredits(int peer, Bytes bytes, bool data) {
  const size_t pi = static_cast<size_t>(peer);
  if (bytes <= kInlineBytes || ep_ == nullptr || lost_[pi] ||
      (!is_peer_.empty() && !is_peer_[pi]) || fi_addr_[pi] == FI_ADDR_UNSPEC) {
    return;
  }
  Bytes size = kCreditMinBytes;
  while (size < bytes) size <<= 1;
  auto& offered = credit_slots_[pi];
  int fitting = 0;
  for (uint32_t id : offered) {
    fitting += rx_slots_[id].bytes >= bytes && rx_slots_[id].scratch == !data ? 1 : 0;
  }
  while (fitting < CreditSlots() && (!data || credit_bytes_ + size <= kCreditCap)) {
    MessageMatcher::Buffer buf;
    if (data) buf = matcher_.TakeBuffer(size);
    uint64_t addr = 0, key = 0;
    const int id =
        OpenSlot(peer, 0, data ? buf.get() : nullptr, size, 0, 0, -1, false, &addr, &key);
    if (id < 0) return;
    const uint32_t u = static_cast<uint32_t>(id);
    rx_slots_[u].credit = true;
    rx_slots_[u].scratch = !data;
    if (data) {
      credit_bufs_[u] = std::move(buf);
      credit_bytes_ += size;
    }
    offered.push_back(u);
    ++fitting;
    ++stats_.credits;
    Ctx* s = NewSlotCtx();
    if (s == nullptr) return;
    Header* h = HeaderOf(s);
    std::memset(h, 0, sizeof(Header));
    h->type = kCredit;
    h->flags = data ? kHasData : 0;
    h->seq = u;
    h->bytes = size;
    h->aux = addr;
    h->aux2 = key;
    h->aux3 = headers_seen_[pi];
    SendCtrl(peer, s, 0);
  }
}

void FabricTransport::OnCreditData(int peer, const Header& h) {
  const size_t pi = static_cast<size_t>(peer);
  const uint64_t g = h.aux2;
  auto& offered = credit_slots_[pi];
  auto pos = std::find(offered.begin(), offered.end(), g);
  if (pos == offered.end() || g >= rx_slots_.size() || !rx_slots_[g].used || !rx_slots_[g].credit ||
      rx_slots_[g].peer != peer || rx_slots_[g].bytes < h.bytes ||
      (rx_slots_[g].scratch && (h.flags & kHasData) != 0)) {
    ReportFatal(Status::Internal(fmt::format(
        "rank {}: rank {} sent message {} ({} bytes, tag {}) into credit slot {}, which this rank "
        "has not offered to it (a bug in the fabric transport's credit window)",
        options_.rank, peer, h.seq, h.bytes, h.tag, g)));
    return;
  }
  offered.erase(pos);
  const uint32_t id32 = static_cast<uint32_t>(g);
  RecvSlot& r = rx_slots_[id32];
  // The slot's buffer becomes an Early entry's: the receive, now or when posted, copies from it.
  const int id = NewEarly(peer, h.seq, h.channel, h.bytes, h.aux, (h.flags & kHasData) != 0);
  Early& e = *early_[static_cast<size_t>(id)];
  if (!r.scratch) {
    e.held = r.bytes;
    e.from_credit = true;
    auto b = credit_bufs_.find(id32);
    e.buf = std::move(b->second);
    credit_bufs_.erase(b);
  }
  r.early = id;
  r.header_seen = true;
  r.channel = h.channel;
  r.bytes = h.bytes;
  r.remote_data = h.aux;
  ++recvs_in_flight_;
  const MatchKey k{peer, h.channel, h.tag};
  auto posted = matcher_.MatchArrival(options_.rank, k, h.bytes);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  bool claimed = false;
  if (const auto& p = *posted) {
    auto it = ahead_recvs_.find(k);
    if (it != ahead_recvs_.end() && !it->second.empty() && it->second.front().first == p->cookie) {
      // Its receive offered a buffer that this message crossed: the sender drops that offer.
      const uint32_t ahead = it->second.front().second;
      it->second.pop_front();
      if (it->second.empty()) ahead_recvs_.erase(it);
      CancelSlot(ahead);
    }
    e.claimed = true;
    e.into = p->into;
    e.cookie = p->cookie;
    claimed = true;
  } else {
    matcher_.AddArrived(
        k, MessageMatcher::Arrived{
               h.bytes, e.has_data, {}, h.aux, kEarlyHandle | static_cast<uint64_t>(id)});
  }
  const bool landed = r.landed;
  // Renew the credit only if its message did come first: one that found its receive posted
  // (the receiver keeps up, as in a stream) would have had an offer, with no copy, so the
  // window shrinks there — until messages come first again (OnData reopens it). Before anything
  // completes, since a completion may post more work.
  if (!claimed) OfferCredits(peer, h.bytes, e.has_data);
  if (landed) SlotLanded(id32);
}

void FabricTransport::CancelSlot(uint32_t id) {
  RecvSlot& r = rx_slots_[id];
  if (r.mr != nullptr || options_.fabric_rma) {
    // RMA mode: nothing is posted; the sender never writes into a dropped offer.
    if (r.mr != nullptr) fi_close(&r.mr->fid);
    r = RecvSlot{};
    free_rx_slots_.push_back(id);
    return;
  }
  // Tagged mode: the fi_trecv into the caller's buffer must go before the receive completes;
  // the slot is freed when its cancellation completes (OnCqError).
  r.cancelled = true;
  for (Ctx* c : r.ctxs) {
    if (ep_ == nullptr) break;
    if (c == nullptr) continue;  // landed or never posted
    const ssize_t rc = fi_cancel(&ep_->fid, c);
    if (rc != 0 && rc != -FI_ENOENT) {
      ReportFatal(
          Status::IoError(fmt::format("rank {}: cancelling a receive offered to rank {}: {}",
                                      options_.rank, r.peer, FiError(rc))));
      return;
    }
  }
}

void FabricTransport::CancelledSegmentDone(uint32_t id) {
  RecvSlot& r = rx_slots_[id];
  if (--r.posted > 0) return;
  r = RecvSlot{};
  free_rx_slots_.push_back(id);
}

void FabricTransport::OnCredit(int peer, const Header& h) {
  const size_t pi = static_cast<size_t>(peer);
  credits_[pi].push_back({h.seq, h.bytes, h.aux, h.aux2, (h.flags & kHasData) != 0});
  // Messages sent into credits whose headers the receiver has: no offer can be for them now
  // (one crossing them was sent, and so arrived, before this credit).
  auto& sent = credit_sent_[pi];
  while (!sent.empty() && (sent.front().second & kSeqMask) < (h.aux3 & kSeqMask)) {
    auto [k, seq] = sent.front();
    sent.pop_front();
    if (auto w = unresolved_.find(k); w != unresolved_.end()) {
      auto& q = w->second;
      if (auto i = std::find(q.begin(), q.end(), seq); i != q.end()) q.erase(i);
      if (q.empty()) unresolved_.erase(w);
    }
  }
}

}  // namespace genie::net
