// FabricTransport: posting operations, reading the completion queue, and matching message
// headers to receives (MessageMatcher) before their payload is received (fi_trecv) or
// written (RMA mode: clear-to-send, then the sender's fi_writedata).
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_library.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

using namespace fabric_internal;

namespace {
constexpr size_t kSlotBytes = sizeof(FabricTransport::Header) + FabricTransport::kInlineBytes;
constexpr uint64_t kInlineHandle = ~uint64_t{0};      // an Arrived whose payload is in its buffer
constexpr uint64_t kEarlyHandle = uint64_t{1} << 62;  // | Early id: received early
// Real-data payloads held for receives not yet posted before the rest wait at the sender.
constexpr Bytes kUnexpectedCap = Bytes{64} << 20;
constexpr int kCqBatch = 32;
constexpr int kCqRoundsPerTurn = 64;
// Re-read the CQ this long after the loop went to sleep with operations in flight (see
// progress_fd_); env GENIE_FABRIC_PROGRESS_US overrides it (for measurements).
const long kProgressPollNs = [] {
  const char* us = getenv("GENIE_FABRIC_PROGRESS_US");
  return us != nullptr ? std::max(1L, atol(us)) * 1000L : 1'000'000L;
}();  // then the loop serves others (timers) before more

std::string FiError(long rc) { return fabric_library::StrError(static_cast<int>(-rc)); }

uint64_t RmaKey(int peer, uint64_t seq) {
  return static_cast<uint64_t>(peer) << kSeqBits | (seq & kSeqMask);
}

FabricTransport::Header* HeaderOf(FabricTransport::Ctx* s) {
  return reinterpret_cast<FabricTransport::Header*>(s->buf);
}
}  // namespace

static_assert(sizeof(FabricTransport::Header) == 64, "control header is 64 bytes");

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

void* FabricTransport::Scratch(Bytes bytes) {
  if (scratch_maps_.empty() || scratch_maps_.back().second < bytes) {
    const Bytes size = std::max<Bytes>(std::max<Bytes>(bytes, Bytes{1} << 20),
                                       scratch_maps_.empty() ? 0 : 2 * scratch_maps_.back().second);
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    scratch_maps_.emplace_back(p, size);
  }
  return scratch_maps_.back().first;
}

template <typename F>
void FabricTransport::Submit(F post, int peer, const char* what) {
  if (ep_ == nullptr) return;
  if (backlog_.empty()) {
    long rc = post();
    if (rc == 0) {
      Kick();
      return;
    }
    if (rc != -FI_EAGAIN) {
      PeerLost(peer, fmt::format("{} failed: {}", what, FiError(rc)));
      return;
    }
  }
  // The provider's queue is full (or others wait ahead, and order matters): retried after
  // the CQ is read.
  backlog_.emplace_back(std::function<long()>(post), peer);
  Kick();
}

void FabricTransport::RetryBacklog() {
  while (!backlog_.empty() && ep_ != nullptr) {
    long rc = backlog_.front().first();
    if (rc == -FI_EAGAIN) return;
    const int peer = backlog_.front().second;
    backlog_.pop_front();
    if (rc != 0) PeerLost(peer, fmt::format("posting failed: {}", FiError(rc)));
  }
}

void FabricTransport::Kick() {
  if (kick_posted_) return;
  kick_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  loop_->Post([this, alive] {
    if (alive.expired() || !*alive.lock()) return;
    kick_posted_ = false;
    Drain();
  });
}

void FabricTransport::Drain() {
  if (cq_ == nullptr) return;
  fi_cq_tagged_entry e[kCqBatch];
  bool more = false;
  for (int round = 0; round < kCqRoundsPerTurn; ++round) {
    const ssize_t n = fi_cq_read(cq_, e, kCqBatch);
    if (n > 0) {
      for (ssize_t i = 0; i < n && cq_ != nullptr; ++i) OnCompletion(e[i]);
      if (cq_ == nullptr) return;
      more = round + 1 == kCqRoundsPerTurn;
      continue;
    }
    if (n == -FI_EAGAIN) break;
    if (n == -FI_EAVAIL) {
      OnCqError();
      if (cq_ == nullptr) return;
      continue;
    }
    ReportFatal(Status::IoError(fmt::format("rank {}: fi_cq_read on provider '{}': {}",
                                            options_.rank, provider_, FiError(n))));
    return;
  }
  RetryBacklog();
  if (cq_fd_ < 0 || more || !backlog_.empty()) {
    Kick();  // polled CQ, or work left: look again on the next loop turn
    return;
  }
  // Blocking on the fd is safe only if the provider says nothing is pending in software.
  fid* f = &cq_->fid;
  if (fi_trywait(fabric_, &f, 1) != FI_SUCCESS) {
    Kick();
  } else if (Busy()) {
    ArmProgressTimer();
  }
}

bool FabricTransport::Busy() const {
  return sends_in_flight_ > 0 || recvs_in_flight_ > 0 || !pending_rma_.empty() ||
         (addresses_.size() > 0 && hellos_ < static_cast<int>(peers_.size()));
}

void FabricTransport::ArmProgressTimer() {
  if (progress_armed_ || cq_ == nullptr) return;
  if (progress_fd_ < 0) {
    progress_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (progress_fd_ < 0) return;
    Status st = loop_->AddFd(progress_fd_, EPOLLIN, [this](uint32_t) {
      uint64_t n = 0;
      if (read(progress_fd_, &n, sizeof(n)) < 0) return;
      progress_armed_ = false;
      Drain();
    });
    if (!st.ok()) {
      close(progress_fd_);
      progress_fd_ = -1;
      return;
    }
  }
  itimerspec its{};
  its.it_value.tv_nsec = kProgressPollNs;
  if (timerfd_settime(progress_fd_, 0, &its, nullptr) == 0) progress_armed_ = true;
}

void FabricTransport::OnCompletion(const fi_cq_tagged_entry& e) {
  if ((e.flags & FI_REMOTE_WRITE) != 0 ||
      ((e.flags & FI_REMOTE_CQ_DATA) && e.op_context == nullptr)) {
    OnRemoteCqData(e.data);
    return;
  }
  Ctx* c = static_cast<Ctx*>(e.op_context);
  if (c == nullptr) return;
  switch (c->kind) {
    case kCtrlRecv: {
      OnCtrl(c, e.len);
      if (ep_ == nullptr) return;
      long rc = fi_recv(ep_, c->buf, kSlotBytes, c->desc, FI_ADDR_UNSPEC, c);
      if (rc != 0) {
        ReportFatal(Status::IoError(
            fmt::format("rank {}: re-posting a control receive: {}", options_.rank, FiError(rc))));
      }
      return;
    }
    case kCtrlSend:
      --sends_in_flight_;
      if (c->user) Complete({Done::kSend, c->peer, c->channel, c->cookie, 0, c->bytes, 0});
      if (HeaderOf(c)->type == kAbort) --aborts_in_flight_;
      FreeCtx(c);
      return;
    case kPayloadSend:
    case kRmaSend:
      --sends_in_flight_;
      Complete({Done::kSend, c->peer, c->channel, c->cookie, 0, c->bytes, 0});
      FreeCtx(c);
      return;
    case kUserWrite:
      --sends_in_flight_;
      Complete({Done::kWrite, c->peer, c->channel, c->cookie, 0, c->bytes, 0});
      FreeCtx(c);
      return;
    case kPayloadRecv: {
      const Ctx done = *c;
      FreeCtx(c);
      PayloadLanded(done.peer, done.channel, done.cookie, done.bytes, done.remote_data, done.early);
      return;
    }
    default:
      return;
  }
}

void FabricTransport::OnCqError() {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_, &err, 0) < 0) return;
  const char* detail = fi_cq_strerror(cq_, err.prov_errno, err.err_data, nullptr, 0);
  const std::string why = fmt::format("{}{}{}", fabric_library::StrError(err.err), detail != nullptr ? ": " : "",
                                      detail != nullptr ? detail : "");
  Ctx* c = static_cast<Ctx*>(err.op_context);
  if (c == nullptr || (err.flags & FI_REMOTE_WRITE) != 0) {
    ReportFatal(Status::IoError(fmt::format("rank {}: completion error on provider '{}': {}",
                                            options_.rank, provider_, why)));
    return;
  }
  switch (c->kind) {
    case kCtrlRecv:
      if (err.err == FI_ECANCELED || ep_ == nullptr) return;  // the endpoint is closing
      spdlog::warn("rank {}: dropped a control message: {}", options_.rank, why);
      if (fi_recv(ep_, c->buf, kSlotBytes, c->desc, FI_ADDR_UNSPEC, c) != 0) {
        ReportFatal(Status::IoError(
            fmt::format("rank {}: cannot re-post a control receive", options_.rank)));
      }
      return;
    case kPayloadRecv:
      if (err.err == FI_ECANCELED) return;
      ReportFatal(Status::IoError(
          fmt::format("rank {}: receiving {} bytes on channel {} from rank {} ({}) failed: {}",
                      options_.rank, c->bytes, c->channel, c->peer, AddrName(c->peer), why)));
      FreeCtx(c);
      return;
    default: {
      --sends_in_flight_;
      if (c->kind == kCtrlSend && HeaderOf(c)->type == kAbort) --aborts_in_flight_;
      const char* what = c->kind == kCtrlSend    ? TypeName(HeaderOf(c)->type)
                         : c->kind == kUserWrite ? "one-sided write"
                                                 : "payload";
      const int peer = c->peer;
      FreeCtx(c);
      PeerLost(peer, fmt::format("sending a {} failed: {}", what, why));
      return;
    }
  }
}

void FabricTransport::SendCtrl(int peer, Ctx* s, Bytes payload_bytes) {
  Header* h = HeaderOf(s);
  h->magic = kMagic;
  h->job_hash = job_hash_;
  h->src_rank = static_cast<uint32_t>(options_.rank);
  h->world_size = static_cast<uint32_t>(options_.world_size);
  s->peer = peer;
  ++sends_in_flight_;
  liveness_.Sent(peer);
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
  SendCtrl(op.peer, s, 0);
  if (options_.fabric_rma) {
    pending_rma_[RmaKey(op.peer, seq)] = {op.data, op.bytes, op.cookie, ch};
    return;
  }
  Ctx* c = NewCtx(kPayloadSend);
  c->peer = op.peer;
  c->channel = ch;
  c->cookie = op.cookie;
  c->bytes = op.bytes;
  const void* src = op.data != nullptr ? op.data : Zeros(op.bytes);
  void* desc = nullptr;
  Status st = LocalDesc(c, src, op.bytes, FI_SEND, &desc);
  if (!st.ok()) {
    FreeCtx(c);
    ReportFatal(st);
    return;
  }
  ++sends_in_flight_;
  const fi_addr_t dest = fi_addr_[pi];
  const uint64_t tag = PayloadTag(options_.rank, seq);
  fid_ep* ep = ep_;
  const Bytes bytes = op.bytes;
  Submit([=] { return static_cast<long>(fi_tsend(ep, src, bytes, desc, dest, tag, c)); }, op.peer,
         "payload send");
}

void FabricTransport::DeliverToSelf(const SendOp& op, uint16_t ch) {
  MatchKey k{options_.rank, ch, op.tag};
  auto posted = matcher_.MatchArrival(options_.rank, k, op.bytes);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  if (const auto& p = *posted) {
    if (p->into != nullptr && op.bytes > 0) {
      if (op.data != nullptr) {
        std::memcpy(p->into, op.data, op.bytes);
      } else {
        std::memset(p->into, 0, op.bytes);
      }
    }
    Complete({Done::kRecv, options_.rank, ch, p->cookie, op.remote_data, op.bytes, 0});
  } else {
    MessageMatcher::Arrived a{op.bytes, op.data != nullptr, {}, op.remote_data, kInlineHandle};
    if (a.has_data && op.bytes > 0) {
      a.buf = matcher_.TakeBuffer(op.bytes);
      std::memcpy(a.buf.get(), op.data, op.bytes);
    }
    matcher_.AddArrived(k, std::move(a));
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

void FabricTransport::OnCtrl(Ctx* slot, Bytes len) {
  if (len < sizeof(Header)) {
    spdlog::warn("rank {}: rejected a {}-byte control message (too short)", options_.rank, len);
    return;
  }
  Header h;
  std::memcpy(&h, slot->buf, sizeof(Header));
  const Bytes extra = len - sizeof(Header);
  std::string bad;
  if (h.magic != kMagic) {
    bad = "bad magic";
  } else if (h.job_hash != job_hash_) {
    bad = "another job's id";
  } else if (h.world_size != static_cast<uint32_t>(options_.world_size)) {
    bad = fmt::format("world size {} (ours is {})", h.world_size, options_.world_size);
  } else if (h.src_rank >= static_cast<uint32_t>(options_.world_size) ||
             h.src_rank == static_cast<uint32_t>(options_.rank)) {
    bad = fmt::format("bad source rank {}", h.src_rank);
  } else if (!is_peer_.empty() && !is_peer_[h.src_rank]) {
    bad = "not a peer of this rank (do all ranks run the same workload and flags?)";
  } else if (h.type == kData && (h.flags & kInline) && extra != h.bytes) {
    bad = fmt::format("inline payload of {} bytes, header says {}", extra, h.bytes);
  }
  if (!bad.empty()) {
    ++rejected_;
    spdlog::warn("rank {}: rejected a {} message claiming rank {}: {}", options_.rank,
                 TypeName(h.type), h.src_rank, bad);
    return;
  }
  const int peer = static_cast<int>(h.src_rank);
  const size_t pi = static_cast<size_t>(peer);
  liveness_.Heard(peer);
  switch (h.type) {
    case kHello:
      if (!hello_from_[pi]) {
        hello_from_[pi] = 1;
        ++hellos_;
      }
      return;
    case kData:
      OnData(peer, h, slot->buf + sizeof(Header));
      return;
    case kCts:
      OnCts(peer, h);
      return;
    case kNotice:
      ++counters_[pi].writes_received;
      Complete({Done::kRemoteWrite, peer, h.channel, h.tag, h.aux, h.bytes,
                static_cast<uint32_t>(h.aux2)});
      return;
    case kHeartbeat:
      return;
    case kBye:
      bye_from_[pi] = 1;
      return;
    case kAbort: {
      const std::string reason(reinterpret_cast<const char*>(slot->buf + sizeof(Header)),
                               std::min<Bytes>(extra, h.bytes));
      if (lost_[pi]) return;
      lost_[pi] = 1;
      liveness_.Done(peer);
      counters_[pi].connections = 0;
      ReportFatal(Status::Unavailable(fmt::format("rank {} stopped the job: {}", peer, reason)));
      return;
    }
    default:
      spdlog::warn("rank {}: ignored a control message of unknown type {} from rank {}",
                   options_.rank, h.type, peer);
  }
}

void FabricTransport::OnData(int peer, const Header& h, const unsigned char* inline_data) {
  MatchKey k{peer, h.channel, h.tag};
  auto posted = matcher_.MatchArrival(options_.rank, k, h.bytes);
  if (!posted.ok()) {
    ReportFatal(posted.status());
    return;
  }
  const bool is_inline = (h.flags & kInline) != 0;
  const bool has_data = (h.flags & kHasData) != 0;
  auto& ctr = counters_[static_cast<size_t>(peer)];
  if (is_inline) {
    ++ctr.messages_received;
    ctr.bytes_received += h.bytes;
  }
  if (const auto& p = *posted) {
    if (!is_inline) {
      StartPayloadRecv(peer, h.channel, h.seq, p->into, h.bytes, p->cookie, h.aux);
      return;
    }
    if (p->into != nullptr && h.bytes > 0) {
      if (has_data) {
        std::memcpy(p->into, inline_data, h.bytes);
      } else {
        std::memset(p->into, 0, h.bytes);
      }
    }
    Complete({Done::kRecv, peer, h.channel, p->cookie, h.aux, h.bytes, 0});
    return;
  }
  MessageMatcher::Arrived a{h.bytes, has_data, {}, h.aux, is_inline ? kInlineHandle : h.seq};
  if (is_inline && has_data && h.bytes > 0) {
    a.buf = matcher_.TakeBuffer(h.bytes);
    std::memcpy(a.buf.get(), inline_data, h.bytes);
  }
  if (!is_inline && (!has_data || unexpected_bytes_ + h.bytes <= kUnexpectedCap)) {
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
  Ctx* c = NewCtx(kUserWrite);
  c->peer = op.peer;
  c->channel = ch;
  c->cookie = op.cookie;
  c->bytes = op.bytes;
  const void* src = op.data != nullptr ? op.data : Zeros(std::max<Bytes>(op.bytes, 1));
  void* desc = nullptr;
  Status st = LocalDesc(c, src, op.bytes, FI_WRITE, &desc);
  if (!st.ok()) {
    FreeCtx(c);
    ReportFatal(st);
    return;
  }
  ++counters_[static_cast<size_t>(op.peer)].writes_sent;
  ++sends_in_flight_;
  liveness_.Sent(op.peer);
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
