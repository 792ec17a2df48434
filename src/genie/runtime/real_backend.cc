#include "genie/runtime/real_backend.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/net/rendezvous.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::runtime {

Result<std::unique_ptr<RealBackend>> RealBackend::Create(const RealBackendOptions& o) {
  if (o.world_size > 1 && o.rendezvous.empty()) {
    return Status::InvalidArgument(fmt::format(
        "rank {} of {}: no rendezvous given; use genie launch, or set GENIE_RENDEZVOUS to "
        "dir:/shared/path or tcp:host:port", o.rank, o.world_size));
  }
  SleepPolicy policy;
  policy.spin = o.spin;
  if (o.spin_us > 0) policy.margin = static_cast<TimeNs>(o.spin_us) * kNsPerUs;
  GENIE_ASSIGN_OR_RETURN(auto loop, EventLoop::Create(policy));
  std::unique_ptr<RealBackend> b(new RealBackend(o, std::move(loop)));

  net::TransportOptions t;
  t.rank = o.rank;
  t.world_size = o.world_size;
  t.job_id = o.job_id;
  t.bind_addr = o.bind_addr;
  t.channels = o.channels;
  t.tcp_congestion = o.tcp_congestion;
  t.peer_timeout = o.peer_timeout;
  t.socket_buffer_bytes = o.socket_buffer_bytes;
  GENIE_ASSIGN_OR_RETURN(auto tcp, net::TcpTransport::Create(b->loop_.get(), t));
  b->transport_ = std::move(tcp);
  b->transport_->SetEvents(b.get());

  GENIE_ASSIGN_OR_RETURN(std::string address, b->transport_->Listen());
  net::RendezvousRequest q{o.rendezvous, o.job_id, o.rank, o.world_size, address, o.peer_timeout};
  GENIE_ASSIGN_OR_RETURN(auto addresses, net::ExchangeAddresses(q));
  GENIE_RETURN_IF_ERROR(b->transport_->Connect(addresses));
  spdlog::info("rank {}: connected to {} peers over tcp ({} channel(s) each) from {}", o.rank,
               o.world_size - 1, o.channels, address);
  return b;
}

RealBackend::RealBackend(const RealBackendOptions& options, std::unique_ptr<EventLoop> loop)
    : options_(options), loop_(std::move(loop)) {}

RealBackend::~RealBackend() {
  transport_.reset();  // closes sockets while the loop still exists
}

uint64_t RealBackend::Store(Callback fn) {
  if (!free_.empty()) {
    uint64_t slot = free_.back();
    free_.pop_back();
    callbacks_[slot] = std::move(fn);
    return slot;
  }
  callbacks_.push_back(std::move(fn));
  return callbacks_.size() - 1;
}

void RealBackend::Fire(uint64_t cookie) {
  Callback fn = std::move(callbacks_[cookie]);
  callbacks_[cookie] = nullptr;
  free_.push_back(cookie);
  if (fn) fn();
}

void RealBackend::After(TimeNs delay, Callback fn) {
  loop_->RunAt(MonotonicNow() + delay, std::move(fn));
}

void RealBackend::Send(const Message& msg, Callback done) {
  transport_->PostSend({msg.peer, msg.channel, msg.tag, msg.data, msg.bytes, Store(std::move(done))});
}

void RealBackend::Recv(const Message& msg, Callback done) {
  transport_->PostRecv({msg.peer, msg.channel, msg.tag, msg.into, msg.bytes, Store(std::move(done))});
}

void RealBackend::Run() {
  if (status_.ok()) loop_->Run();
  // Consume the Stop() so the next Run() (next iteration) runs again; a fatal error sticks.
  if (status_.ok()) loop_->ResetQuit();
}

void RealBackend::OnFatal(const Status& status) {
  if (status_.ok()) status_ = status;
  loop_->Quit();
}

Status RealBackend::Shutdown() {
  if (!transport_) return Status::Ok();
  // After a failure nobody waits for goodbyes: the job is over.
  return transport_->Shutdown(status_.ok() ? options_.peer_timeout : 0);
}

}  // namespace genie::runtime
