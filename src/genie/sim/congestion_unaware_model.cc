#include "genie/sim/congestion_unaware_model.h"

#include <algorithm>

namespace genie::sim {

void CongestionUnawareModel::Transmit(int src, int dst, Bytes bytes, uint64_t flow,
                                      std::function<void()> delivered) {
  auto [handler, token] = queue_->Hold(std::move(delivered));
  TransmitTo(src, dst, bytes, flow, handler, token);
}

void CongestionUnawareModel::TransmitTo(int src, int dst, Bytes bytes, uint64_t flow,
                                        EventQueue::Handler* handler, uint64_t token) {
  const int dim = topology_->FirstDifferingDim(src, dst);
  if (flow == 0 || dim < 0) {
    const TimeNs delay = topology_->UnawareDelay(src, dst, bytes);
    if (!queue_->Fits(delay)) {
      queue_->Fail(topology_->OverflowError(src, dst, bytes, dim < 0 ? 0 : dim));
      return;
    }
    queue_->After(delay, handler, token);
    return;
  }
  if (flows_.size() >= sweep_at_) {
    std::erase_if(flows_, [](const auto& entry) { return entry.second.in_flight == 0; });
    sweep_at_ = std::max<size_t>(4096, 2 * flows_.size());
  }
  Flow& f = flows_[FlowKey{src, dst, flow}];
  if (f.in_flight == 0) f = Flow{};  // idle: exactly a new flow
  // Same formula as Topology::UnawareDelay: hops * latency + bytes / bw on dimension `dim`.
  const double latency =
      topology_->Hops(dim, topology_->Coordinate(src, dim), topology_->Coordinate(dst, dim)) *
      topology_->latency_ns(dim);
  const double serialization = static_cast<double>(bytes) / topology_->bytes_per_ns(dim);
  const Wire::Times t = f.wire.Serialize(queue_->Now(), latency, serialization);
  if (!queue_->Fits(t.arrival_delay)) {
    queue_->Fail(topology_->OverflowError(src, dst, bytes, dim));
    return;
  }
  f.wire.Put(t);
  ++f.in_flight;
  uint32_t a;
  if (free_arrivals_.empty()) {
    a = static_cast<uint32_t>(arrivals_.size());
    arrivals_.push_back(Arrival{&f, handler, token});
  } else {
    a = free_arrivals_.back();
    free_arrivals_.pop_back();
    arrivals_[a] = Arrival{&f, handler, token};
  }
  queue_->After(t.arrival_delay, this, a);
}

void CongestionUnawareModel::OnEvent(uint64_t arrival) {
  const Arrival a = arrivals_[arrival];
  free_arrivals_.push_back(static_cast<uint32_t>(arrival));
  --a.flow->in_flight;
  a.handler->OnEvent(a.token);
}

}  // namespace genie::sim
