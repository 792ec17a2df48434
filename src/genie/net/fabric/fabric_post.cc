// FabricTransport: operation contexts and control slots (pooled, registered once where the
// provider needs FI_MR_LOCAL), the zero and scratch mappings for filler payloads, and posting:
// control messages, PostSend (header, then the payload inline, as a tagged message, or — RMA
// mode — held until the receiver's clear-to-send), RegisterRegion and PostWrite. Loop thread
// only.
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

using namespace fabric_internal;

FabricTransport::Ctx* FabricTransport::NewCtx(int kind) {
  if (free_ctx_.empty()) {
    ctx_store_.push_back(std::make_unique<Ctx>());
    free_ctx_.push_back(ctx_store_.back().get());
  }
  Ctx* c = free_ctx_.back();
  free_ctx_.pop_back();
  *c = Ctx{};
  c->kind = kind;
  return c;
}

FabricTransport::Ctx* FabricTransport::NewPayloadCtx(int kind, int peer, int channel,
                                                     uint64_t cookie, const void* src, Bytes bytes,
                                                     uint64_t access, void** desc) {
  Ctx* c = NewCtx(kind);
  c->peer = peer;
  c->channel = channel;
  c->cookie = cookie;
  c->bytes = bytes;
  Status st = LocalDesc(c, src, bytes, access, desc);
  if (!st.ok()) {
    FreeCtx(c);
    ReportFatal(st);
    return nullptr;
  }
  return c;
}

void FabricTransport::FreeCtx(Ctx* c) {
  if (c->mr != nullptr) fi_close(&c->mr->fid);
  c->mr = nullptr;
  if (c->buf != nullptr) {
    free_slots_.push_back(c);
  } else {
    free_ctx_.push_back(c);
  }
}

FabricTransport::Ctx* FabricTransport::NewSlotCtx() {
  if (free_slots_.empty()) {
    // A chunk of slots in one allocation, registered once where the provider needs it.
    const size_t bytes = kSlotBytes * kSlotChunk;
    slot_mem_.push_back(std::make_unique<unsigned char[]>(bytes));
    unsigned char* mem = slot_mem_.back().get();
    void* desc = nullptr;
    if (mr_local_) {
      fid_mr* mr = nullptr;
      int rc = fi_mr_reg(domain_, mem, bytes, FI_SEND | FI_RECV, 0, mr_prov_key_ ? 0 : next_key_++,
                         0, &mr, nullptr);
      if (rc != 0) {
        spdlog::error("rank {}: fi_mr_reg of {} control bytes: {}", options_.rank, bytes,
                      FiError(rc));
        return nullptr;
      }
      slot_mrs_.push_back(mr);
      desc = fi_mr_desc(mr);
    }
    for (int i = 0; i < kSlotChunk; ++i) {
      slot_store_.push_back(std::make_unique<Ctx>());
      Ctx* s = slot_store_.back().get();
      s->buf = mem + kSlotBytes * static_cast<size_t>(i);
      s->desc = desc;
      free_slots_.push_back(s);
    }
  }
  Ctx* s = free_slots_.back();
  free_slots_.pop_back();
  unsigned char* buf = s->buf;
  void* desc = s->desc;
  *s = Ctx{};
  s->buf = buf;
  s->desc = desc;
  s->kind = kCtrlSend;
  return s;
}

Status FabricTransport::LocalDesc(Ctx* c, const void* buf, Bytes bytes, uint64_t access,
                                  void** desc) {
  *desc = nullptr;
  if (!mr_local_ || bytes == 0) return Status::Ok();
  int rc =
      fi_mr_reg(domain_, buf, bytes, access, 0, mr_prov_key_ ? 0 : next_key_++, 0, &c->mr, nullptr);
  if (rc != 0) {
    c->mr = nullptr;
    return Status::IoError(fmt::format(
        "rank {}: fi_mr_reg of {} bytes on provider '{}': {} (raise the locked-memory limit, "
        "ulimit -l, or check the provider's MR limits)",
        options_.rank, bytes, provider_, FiError(rc)));
  }
  *desc = fi_mr_desc(c->mr);
  return Status::Ok();
}

const void* FabricTransport::Zeros(Bytes bytes) {
  if (zero_maps_.empty() || zero_maps_.back().second < bytes) {
    // Read-only anonymous memory: every page is the kernel's shared zero page, so a large
    // filler buffer costs address space, not memory. Older maps stay until the end (sends
    // may still read them).
    const Bytes size = std::max<Bytes>(std::max<Bytes>(bytes, Bytes{1} << 20),
                                       zero_maps_.empty() ? 0 : 2 * zero_maps_.back().second);
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    zero_maps_.emplace_back(p, size);
  }
  return zero_maps_.back().first;
}

uint64_t fabric_internal::SegmentBytes() {
  static const uint64_t segment = std::max<uint64_t>(
      FabricTransport::kInlineBytes, static_cast<uint64_t>(EnvKnob("GENIE_FABRIC_SEGMENT", int64_t{2} << 20)));
  return segment;
}

uint64_t fabric_internal::ScratchTile() {
  static const uint64_t tile =
      static_cast<uint64_t>(EnvKnob("GENIE_FABRIC_SCRATCH_TILE", int64_t{512} << 10));
  return tile;
}

namespace {

// `size` bytes of address space over which one memfd of `tile` bytes repeats (size is a
// multiple of tile); nullptr when any step fails (the caller maps plain memory instead).
void* MapTiled(Bytes size, Bytes tile) {
  const int fd = memfd_create("genie-fabric-scratch", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  void* base = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(tile)) == 0) {
    base = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  for (Bytes off = 0; base != MAP_FAILED && off < size; off += tile) {
    void* p = mmap(static_cast<unsigned char*>(base) + off, tile, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
      munmap(base, size);
      base = MAP_FAILED;
    }
  }
  close(fd);  // the mappings keep the memory
  return base == MAP_FAILED ? nullptr : base;
}

}  // namespace

void* FabricTransport::Scratch(Bytes bytes) {
  if (scratch_maps_.empty() || scratch_maps_.back().second < bytes) {
    Bytes size = std::max<Bytes>(std::max<Bytes>(bytes, Bytes{1} << 20),
                                 scratch_maps_.empty() ? 0 : 2 * scratch_maps_.back().second);
    void* p = nullptr;
    if (Bytes tile = ScratchTile(); tile > 0) {
      tile = std::max<Bytes>(tile, (size + kScratchMaxTiles - 1) / kScratchMaxTiles);
      tile = (tile + 4095) & ~Bytes{4095};
      size = (size + tile - 1) / tile * tile;
      p = MapTiled(size, tile);
    }
    if (p == nullptr) {
      p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
               -1, 0);
      if (p == MAP_FAILED) return nullptr;
    }
    scratch_maps_.emplace_back(p, size);
  }
  return scratch_maps_.back().first;
}

void FabricTransport::SendCtrl(int peer, Ctx* s, Bytes payload_bytes) {
  Header* h = HeaderOf(s);
  h->magic = kMagic;
  h->job_hash = job_hash_;
  h->src_rank = static_cast<uint32_t>(options_.rank);
  h->world_size = static_cast<uint32_t>(options_.world_size);
  s->peer = peer;
  ++sends_in_flight_;
  heartbeats_.liveness().Sent(peer);
  const fi_addr_t dest = fi_addr_[static_cast<size_t>(peer)];
  fid_ep* ep = ep_;
  Submit(
      [ep, s, payload_bytes, dest] {
        return static_cast<long>(
            fi_send(ep, s->buf, sizeof(Header) + payload_bytes, s->desc, dest, s));
      },
      peer, TypeName(h->type));
}

void FabricTransport::SendSimpleCtrl(int peer, int type, const void* text, Bytes text_bytes) {
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = static_cast<uint8_t>(type);
  text_bytes = std::min<Bytes>(text_bytes, kInlineBytes);
  h->bytes = text_bytes;
  if (text_bytes > 0) std::memcpy(s->buf + sizeof(Header), text, text_bytes);
  SendCtrl(peer, s, text_bytes);
}

bool FabricTransport::CheckPeer(int peer, const char* op) {
  if (peer < 0 || peer >= options_.world_size || peer == options_.rank) {
    ReportFatal(Status::InvalidArgument(
        fmt::format("rank {}: {} to rank {}, which is not a peer in a world of {} ranks",
                    options_.rank, op, peer, options_.world_size)));
    return false;
  }
  if (!is_peer_.empty() && !is_peer_[static_cast<size_t>(peer)]) {
    ReportFatal(Status::Internal(fmt::format(
        "rank {}: {} to rank {}, which is not among the peers this rank connected to (its "
        "plans did not name it; a bug in the peer set, runtime/peer_set.h)",
        options_.rank, op, peer)));
    return false;
  }
  if (ep_ == nullptr || lost_[static_cast<size_t>(peer)]) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: {} to rank {}, but {}", options_.rank, op, peer,
                    ep_ == nullptr ? "the transport is shut down" : "that rank is lost")));
    return false;
  }
  return true;
}

void FabricTransport::PostSend(const SendOp& op) {
  const uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  if (op.peer == options_.rank) {
    DeliverToSelf(op, ch);
    return;
  }
  if (!CheckPeer(op.peer, "send")) return;
  const size_t pi = static_cast<size_t>(op.peer);
  const uint64_t seq = send_seq_[pi]++;
  auto& ctr = counters_[pi];
  ++ctr.messages_sent;
  ctr.bytes_sent += op.bytes;
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = kData;
  h->flags = op.data != nullptr ? kHasData : 0;
  h->channel = ch;
  h->tag = op.tag;
  h->seq = seq;
  h->bytes = op.bytes;
  h->aux = op.remote_data;
  if (op.bytes <= kInlineBytes) {
    // Small: the payload rides in the header; the caller's buffer is free at once.
    h->flags |= kInline;
    if (op.data != nullptr && op.bytes > 0) std::memcpy(s->buf + sizeof(Header), op.data, op.bytes);
    s->user = true;
    s->cookie = op.cookie;
    s->channel = ch;
    s->bytes = op.bytes;
    SendCtrl(op.peer, s, op.bytes);
    return;
  }
  const PendingRma pending{op.data, op.bytes, op.cookie, ch, op.tag};
  const MatchKey k{op.peer, ch, op.tag};
  if (auto it = ahead_cts_.find(k); it != ahead_cts_.end() && !it->second.empty()) {
    // The receiver offered its buffer already: header and payload go now, one way. An offer of
    // another size is left alone: the header alone lets the receiver name the mismatch.
    const AheadCts a = it->second.front();
    if (a.bytes == op.bytes) {
      it->second.pop_front();
      if (it->second.empty()) ahead_cts_.erase(it);
      h->flags |= kAhead;
      h->aux2 = a.slot;
      ++stats_.sent_on_offer;
      SendCtrl(op.peer, s, 0);
      SendPayload(op.peer, pending, a.slot, a.bytes, a.addr, a.key);
      return;
    }
  }
  // No offer for it: a credit that fits takes it at once, one way (the receiver copies it into
  // its receive); else the header goes alone and the payload waits for a clear-to-send. Either
  // way an offer for this message may still be on its way (unresolved_).
  auto& credits = credits_[pi];
  auto fit = crossings_[pi] > 0
                 ? credits.end()
                 : std::find_if(credits.begin(), credits.end(), [&](const AheadCts& a) {
                     const Bytes segment = SegmentSize(a.bytes);
                     return a.bytes >= op.bytes && a.data == (op.data != nullptr) &&
                            SegmentCount(op.bytes, segment) == SegmentCount(a.bytes, segment);
                   });
  unresolved_[k].push_back(seq);
  if (fit != credits.end()) {
    const AheadCts a = *fit;
    credits.erase(fit);
    h->flags |= kCredited;
    h->aux2 = a.slot;
    ++stats_.sent_on_credit;
    credit_sent_[pi].emplace_back(k, seq);
    SendCtrl(op.peer, s, 0);
    SendPayload(op.peer, pending, a.slot, a.bytes, a.addr, a.key);
    return;
  }
  SendCtrl(op.peer, s, 0);
  pending_rma_[RmaKey(op.peer, seq)] = pending;
}

void FabricTransport::SendPayload(int peer, const PendingRma& p, uint64_t slot, Bytes slot_bytes,
                                  uint64_t addr, uint64_t key) {
  int id;
  if (!free_sends_.empty()) {
    id = free_sends_.back();
    free_sends_.pop_back();
  } else {
    id = static_cast<int>(sends_.size());
    sends_.emplace_back();
  }
  PayloadSend& s = sends_[static_cast<size_t>(id)];
  s = PayloadSend{};
  s.peer = peer;
  s.channel = p.channel;
  s.cookie = p.cookie;
  s.src = static_cast<const unsigned char*>(p.data != nullptr ? p.data : Zeros(p.bytes));
  s.bytes = p.bytes;
  s.slot = slot;
  s.addr = addr;
  s.key = key;
  s.segment = SegmentSize(slot_bytes);
  s.segments = SegmentCount(p.bytes, s.segment);
  PostSendSegments(id);
}

void FabricTransport::PostSendSegments(int id) {
  PayloadSend& s = sends_[static_cast<size_t>(id)];
  const bool rma = options_.fabric_rma;
  const fi_addr_t dest = fi_addr_[static_cast<size_t>(s.peer)];
  fid_ep* ep = ep_;
  while (ep != nullptr && s.next_segment < s.segments &&
         s.next_segment - s.done_segments < kSegmentWindow) {
    const uint64_t i = s.next_segment;
    const Bytes off = i * s.segment;
    const Bytes len = std::min<Bytes>(s.segment, s.bytes - off);
    const unsigned char* from = s.src + off;
    void* desc = nullptr;
    Ctx* c = NewPayloadCtx(rma ? kRmaSend : kPayloadSend, s.peer, s.channel, s.cookie, from, len,
                           rma ? FI_WRITE : FI_SEND, &desc);
    if (c == nullptr) return;
    c->send = id;
    ++s.next_segment;
    ++sends_in_flight_;
    heartbeats_.liveness().Sent(s.peer);
    if (rma) {
      // The slot id as remote CQ data: the receiver counts the slot's segments as they land.
      const uint64_t slot = s.slot, to = s.addr + off, key = s.key;
      Submit(
          [=] { return static_cast<long>(fi_writedata(ep, from, len, desc, slot, dest, to, key, c)); },
          s.peer, "one-sided payload write");
    } else {
      const uint64_t tag = PayloadTag(options_.rank, s.slot, i);
      Submit([=] { return static_cast<long>(fi_tsend(ep, from, len, desc, dest, tag, c)); }, s.peer,
             "payload send");
    }
  }
}

void FabricTransport::OnPayloadSent(Ctx* c) {
  --sends_in_flight_;
  // Each segment's bytes count as moved when it completes.
  counters_[static_cast<size_t>(c->peer)].wire_bytes_sent += c->bytes;
  const int id = c->send;
  FreeCtx(c);
  PayloadSend& s = sends_[static_cast<size_t>(id)];
  if (++s.done_segments < s.segments) {
    PostSendSegments(id);
    return;
  }
  const PayloadSend done = s;
  free_sends_.push_back(id);
  Complete({Completion::kSend, done.peer, done.channel, done.cookie, 0, done.bytes, 0});
}

Result<uint64_t> FabricTransport::RegisterRegion(void* base, Bytes bytes) {
  if (!has_rma_) {
    return Status::Unavailable(
        fmt::format("rank {}: provider '{}' lacks FI_RMA: one-sided writes are not available",
                    options_.rank, provider_));
  }
  if (mr_virt_addr_) {
    // The writer would need the region's address too, which the key alone cannot carry.
    return Status::Unsupported(fmt::format(
        "rank {}: provider '{}' addresses regions by virtual address (FI_MR_VIRT_ADDR); "
        "RegisterRegion supports offset-addressed providers only (two-sided --fabric-rma works)",
        options_.rank, provider_));
  }
  fid_mr* mr = nullptr;
  int rc = fi_mr_reg(domain_, base, bytes, FI_REMOTE_WRITE, 0, mr_prov_key_ ? 0 : next_key_++, 0,
                     &mr, nullptr);
  if (rc != 0) {
    return Status::IoError(fmt::format("rank {}: fi_mr_reg of a {}-byte region: {}", options_.rank,
                                       bytes, FiError(rc)));
  }
  regions_.push_back({static_cast<unsigned char*>(base), bytes, mr});
  return fi_mr_key(mr);
}

void FabricTransport::PostWrite(const WriteOp& op) {
  const uint16_t ch = static_cast<uint16_t>(op.channel % options_.channels);
  if (!CheckPeer(op.peer, "one-sided write")) return;
  if (!has_rma_) {
    ReportFatal(Status::Unavailable(
        fmt::format("rank {}: provider '{}' lacks FI_RMA: one-sided writes are not available",
                    options_.rank, provider_)));
    return;
  }
  if (!saw_order_) {
    ReportFatal(Status::Unsupported(fmt::format(
        "rank {}: provider '{}' lacks FI_ORDER_SAW (a send after a write arrives after it), "
        "which one-sided writes need for their notice",
        options_.rank, provider_)));
    return;
  }
  const void* src = op.data != nullptr ? op.data : Zeros(std::max<Bytes>(op.bytes, 1));
  void* desc = nullptr;
  Ctx* c = NewPayloadCtx(kUserWrite, op.peer, ch, op.cookie, src, op.bytes, FI_WRITE, &desc);
  if (c == nullptr) return;
  ++counters_[static_cast<size_t>(op.peer)].writes_sent;
  ++sends_in_flight_;
  heartbeats_.liveness().Sent(op.peer);
  const fi_addr_t dest = fi_addr_[static_cast<size_t>(op.peer)];
  const uint64_t addr = op.remote_offset, key = op.remote_key;
  const Bytes bytes = op.bytes;
  fid_ep* ep = ep_;
  Submit(
      [=] {
        return static_cast<long>(
            fi_writedata(ep, src, bytes, desc, kUserWriteData, dest, addr, key, c));
      },
      op.peer, "one-sided write");
  // The notice follows the write (FI_ORDER_SAW): when it arrives, the data is in place.
  Ctx* s = NewSlotCtx();
  if (s == nullptr) return;
  Header* h = HeaderOf(s);
  std::memset(h, 0, sizeof(Header));
  h->type = kNotice;
  h->channel = ch;
  h->tag = op.remote_key;
  h->bytes = op.bytes;
  h->aux = op.remote_offset;
  h->aux2 = op.imm;
  SendCtrl(op.peer, s, 0);
}

}  // namespace genie::net
