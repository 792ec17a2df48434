#include "genie/net/faulty_transport.h"

#include <fmt/format.h>

namespace genie::net {

const char* FaultKindName(Fault::Kind kind) {
  switch (kind) {
    case Fault::Kind::kDrop:
      return "drop";
    case Fault::Kind::kDelay:
      return "delay";
    case Fault::Kind::kStall:
      return "stall";
    case Fault::Kind::kKill:
      return "kill";
  }
  return "unknown";
}

FaultyTransport::FaultyTransport(loop::EventLoop* loop, std::unique_ptr<Transport> inner, int rank,
                                 std::vector<Fault> faults)
    : loop_(loop), inner_(std::move(inner)), rank_(rank) {
  for (Fault& f : faults) faults_.push_back({f});
  inner_->SetEvents(this);
}

FaultyTransport::~FaultyTransport() {
  *alive_ = false;
  inner_.reset();  // closes while this object (its event sink) still exists
}

TransportFactory FaultyTransport::Wrap(TransportFactory inner, std::vector<Fault> faults) {
  return [inner = std::move(inner), faults = std::move(faults)](
             loop::EventLoop* loop,
             const TransportOptions& options) -> Result<std::unique_ptr<Transport>> {
    GENIE_ASSIGN_OR_RETURN(auto t, inner(loop, options));
    return std::unique_ptr<Transport>(
        new FaultyTransport(loop, std::move(t), options.rank, faults));
  };
}

void FaultyTransport::Later(TimeNs delay, std::function<void()> fn) {
  std::weak_ptr<bool> alive = alive_;
  auto guarded = [alive, fn = std::move(fn)] {
    if (auto a = alive.lock(); a && *a) fn();
  };
  if (delay <= 0) {
    loop_->Post(std::move(guarded));
  } else {
    loop_->RunAfter(delay, std::move(guarded));
  }
}

void FaultyTransport::Start(Armed& a) {
  if (a.active) return;
  a.active = true;
  ++started_;
  if (a.fault.kind != Fault::Kind::kKill) return;
  const Fault f = a.fault;
  Later(0, [this, f] {
    if (events_ == nullptr) return;
    events_->OnFatal(Status::Unavailable(fmt::format(
        "rank {} lost rank {}: injected fault (kill after {} message(s){})", rank_, f.peer,
        f.after_messages, f.at >= 0 ? fmt::format(" or at {}", FormatDuration(f.at)) : "")));
  });
}

Status FaultyTransport::Connect(const std::vector<std::string>& addresses,
                                const std::vector<int>& peers) {
  GENIE_RETURN_IF_ERROR(inner_->Connect(addresses, peers));
  for (size_t i = 0; i < faults_.size(); ++i) {
    Armed& a = faults_[i];
    if (a.fault.after_messages == 0) Start(a);
    if (a.fault.at >= 0 && !a.active) {
      Later(a.fault.at, [this, i] { Start(faults_[i]); });
    }
  }
  return Status::Ok();
}

const Fault* FaultyTransport::ActiveFor(int peer) const {
  for (const Armed& a : faults_) {
    if (a.active && a.fault.peer == peer) return &a.fault;
  }
  return nullptr;
}

const Fault* FaultyTransport::OnMessageTo(int peer, bool count) {
  if (peer < 0) return nullptr;
  if (sent_.size() <= static_cast<size_t>(peer)) sent_.resize(static_cast<size_t>(peer) + 1, 0);
  for (Armed& a : faults_) {
    if (a.fault.peer == peer && sent_[static_cast<size_t>(peer)] >= a.fault.after_messages) {
      Start(a);
    }
  }
  if (count) ++sent_[static_cast<size_t>(peer)];
  return ActiveFor(peer);
}

void FaultyTransport::PostSend(const SendOp& op) {
  const Fault* f = OnMessageTo(op.peer, true);
  if (f == nullptr) {
    inner_->PostSend(op);
    return;
  }
  switch (f->kind) {
    case Fault::Kind::kDrop:
      Later(0, [this, cookie = op.cookie] {
        if (events_ != nullptr) events_->OnSendDone(cookie);
      });
      return;
    case Fault::Kind::kDelay:
      Later(f->delay, [this, op] { inner_->PostSend(op); });
      return;
    case Fault::Kind::kStall:
    case Fault::Kind::kKill:
      return;  // never leaves, never completes
  }
}

void FaultyTransport::PostWrite(const WriteOp& op) {
  const Fault* f = OnMessageTo(op.peer, true);
  if (f == nullptr) {
    inner_->PostWrite(op);
    return;
  }
  switch (f->kind) {
    case Fault::Kind::kDrop:
      Later(0, [this, cookie = op.cookie] {
        if (events_ != nullptr) events_->OnWriteDone(cookie);
      });
      return;
    case Fault::Kind::kDelay:
      Later(f->delay, [this, op] { inner_->PostWrite(op); });
      return;
    case Fault::Kind::kStall:
    case Fault::Kind::kKill:
      return;
  }
}

void FaultyTransport::PostRecv(const RecvOp& op) {
  uint64_t slot;
  if (!free_recvs_.empty()) {
    slot = free_recvs_.back();
    free_recvs_.pop_back();
    recvs_[slot] = {op.cookie, op.peer, true};
  } else {
    slot = recvs_.size();
    recvs_.push_back({op.cookie, op.peer, true});
  }
  RecvOp inner = op;
  inner.cookie = slot;
  inner_->PostRecv(inner);
}

void FaultyTransport::OnSendDone(uint64_t cookie) {
  if (events_ != nullptr) events_->OnSendDone(cookie);
}

void FaultyTransport::OnWriteDone(uint64_t cookie) {
  if (events_ != nullptr) events_->OnWriteDone(cookie);
}

void FaultyTransport::OnRecvDone(uint64_t slot, Bytes bytes, uint64_t remote_data) {
  const Recv r = recvs_[slot];
  recvs_[slot].live = false;
  free_recvs_.push_back(slot);
  if (const Fault* f = ActiveFor(r.peer)) {
    if (f->kind == Fault::Kind::kStall || f->kind == Fault::Kind::kKill) return;
  }
  if (events_ != nullptr) events_->OnRecvDone(r.cookie, bytes, remote_data);
}

void FaultyTransport::OnRemoteWrite(int peer, uint16_t channel, uint64_t key, Bytes offset,
                                   Bytes bytes, uint32_t imm) {
  if (const Fault* f = ActiveFor(peer)) {
    if (f->kind == Fault::Kind::kStall || f->kind == Fault::Kind::kKill) return;
  }
  if (events_ != nullptr) events_->OnRemoteWrite(peer, channel, key, offset, bytes, imm);
}

void FaultyTransport::OnFatal(const Status& status) {
  if (events_ != nullptr) events_->OnFatal(status);
}

}  // namespace genie::net
