// FabricTransport: driving the completion queue from the rank's event loop — reading it on
// the wait fd (then fi_trywait before the loop may block), on a posted kick, or on the 1 ms
// progress timer that covers what ofi_rxm does not signal — and dispatching each completion:
// control messages (hello, data headers, clear-to-send, notices, goodbye, abort), payloads
// landed, sends done, errors named by peer. Loop thread only.
#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "genie/loop/precise_sleep.h"
#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

using namespace fabric_internal;

namespace {
constexpr int kCqBatch = 32;
constexpr int kCqRoundsPerTurn = 64;  // then the loop serves others (timers) before more
// Re-read the CQ this long after the loop went to sleep with operations in flight (see
// progress_fd_); env GENIE_FABRIC_PROGRESS_US overrides it (for measurements).
const TimeNs kProgressPollNs =
    std::max<int64_t>(1, EnvKnob("GENIE_FABRIC_PROGRESS_US", 1000)) * kNsPerUs;
}  // namespace

int64_t fabric_internal::EnvKnob(const char* name, int64_t fallback) {
  const char* e = getenv(name);
  return e != nullptr ? std::max<int64_t>(0, strtoll(e, nullptr, 10)) : fallback;
}

TimeNs fabric_internal::CqSpinNs(bool loop_may_spin) {
  static const int64_t forced_us = EnvKnob("GENIE_FABRIC_SPIN_US", -1);
  if (forced_us >= 0) return forced_us * kNsPerUs;
  return loop_may_spin ? 300 * kNsPerUs : 0;
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
  ++stats_.drains;
  for (int round = 0; round < kCqRoundsPerTurn; ++round) {
    const ssize_t n = fi_cq_read(cq_, e, kCqBatch);
    ++stats_.cq_reads;
    if (n > 0) {
      stats_.completions += static_cast<uint64_t>(n);
      for (ssize_t i = 0; i < n && cq_ != nullptr; ++i) OnCompletion(e[i]);
      if (cq_ == nullptr) return;
      more = round + 1 == kCqRoundsPerTurn;
      // A short batch drained the CQ: another read would only run the provider's progress
      // again (an epoll_wait over its sockets); fi_trywait below says if more came meanwhile.
      if (n < kCqBatch && cq_fd_ >= 0) break;
      continue;
    }
    if (n == -FI_EAGAIN) {
      ++stats_.empty_reads;
      break;
    }
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
  // Ranks with a core each (the loop may spin: loop::DefaultSleepPolicy) poll the CQ for a
  // while after the last completion instead of blocking, as NCCL's proxy polls its network:
  // the next completion is usually microseconds away, and a blocked rank pays a wake-up (and
  // the provider's fi_trywait) for it. Through Kick, so timers and fds are served meanwhile.
  if (spin_ns_ > 0 && Busy()) {
    const TimeNs now = loop::MonotonicNow();
    if (stats_.completions != completions_seen_) {
      completions_seen_ = stats_.completions;
      last_completion_ = now;
    }
    if (now - last_completion_ < spin_ns_) {
      ++stats_.spins;
      Kick();
      return;
    }
  }
  // Blocking on the fd is safe only if the provider says nothing is pending in software.
  fid* f = &cq_->fid;
  if (fi_trywait(fabric_, &f, 1) != FI_SUCCESS) {
    ++stats_.trywait_busy;
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
      ++stats_.timer_wakeups;
      const uint64_t before = stats_.completions;
      Drain();
      if (stats_.completions != before) ++stats_.timer_useful;
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
    OnRemoteCqData(e.data, e.len);
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
      if (c->user) {
        counters_[static_cast<size_t>(c->peer)].wire_bytes_sent += c->bytes;
        Complete({Completion::kSend, c->peer, c->channel, c->cookie, 0, c->bytes, 0});
      }
      if (HeaderOf(c)->type == kAbort) --aborts_in_flight_;
      FreeCtx(c);
      return;
    case kPayloadSend:
    case kRmaSend:
      OnPayloadSent(c);
      return;
    case kUserWrite:
      --sends_in_flight_;
      Complete({Completion::kWrite, c->peer, c->channel, c->cookie, 0, c->bytes, 0});
      FreeCtx(c);
      return;
    case kPayloadRecv: {
      const auto slot = static_cast<uint32_t>(c->slot);
      const uint64_t segment = (e.tag >> kSlotBits) & (kMaxSegments - 1);
      RecvSlot& r = rx_slots_[slot];
      r.ctxs[segment % kSegmentWindow] = nullptr;
      FreeCtx(c);
      if (r.cancelled) {
        CancelledSegmentDone(slot);
        return;
      }
      --r.posted;
      SegmentLanded(slot, e.len);
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
  const std::string why =
      fmt::format("{}{}{}", fabric_library::StrError(err.err), detail != nullptr ? ": " : "",
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
      if (err.err == FI_ECANCELED) {
        // An offered receive withdrawn (CancelSlot): its message came into a credit.
        const int slot = c->slot;
        FreeCtx(c);
        if (slot >= 0 && static_cast<size_t>(slot) < rx_slots_.size() &&
            rx_slots_[static_cast<size_t>(slot)].cancelled) {
          CancelledSegmentDone(static_cast<uint32_t>(slot));
        }
        return;
      }
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
  heartbeats_.liveness().Heard(peer);
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
    case kCtsAhead:
      OnCtsAhead(peer, h);
      return;
    case kCredit:
      OnCredit(peer, h);
      return;
    case kNotice:
      ++counters_[pi].writes_received;
      Complete({Completion::kRemoteWrite, peer, h.channel, h.tag, h.aux, h.bytes,
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
      heartbeats_.liveness().Done(peer);
      counters_[pi].connections = 0;
      ReportFatal(Status::Unavailable(fmt::format("rank {} stopped the job: {}", peer, reason)));
      return;
    }
    default:
      spdlog::warn("rank {}: ignored a control message of unknown type {} from rank {}",
                   options_.rank, h.type, peer);
  }
}

}  // namespace genie::net
