#include "genie/sim/congestion_unaware_model.h"

namespace genie::sim {

void CongestionUnawareModel::Transmit(int src, int dst, Bytes bytes, uint64_t flow,
                                      std::function<void()> delivered) {
  const int dim = topology_->FirstDifferingDim(src, dst);
  if (flow == 0 || dim < 0) {
    const TimeNs delay = topology_->UnawareDelay(src, dst, bytes);
    if (!queue_->Fits(delay)) {
      queue_->Fail(topology_->OverflowError(src, dst, bytes, dim < 0 ? 0 : dim));
      return;
    }
    queue_->After(delay, std::move(delivered));
    return;
  }
  const FlowKey key{src, dst, flow};
  Flow& f = flows_[key];
  // Same formula as Topology::UnawareDelay: hops * latency + bytes / bw on dimension `dim`.
  const double latency =
      topology_->Hops(dim, topology_->Coordinate(src, dim), topology_->Coordinate(dst, dim)) *
      topology_->latency_ns(dim);
  const double serialization = static_cast<double>(bytes) / topology_->bytes_per_ns(dim);
  const Wire::Times t = f.wire.Serialize(queue_->Now(), latency, serialization);
  if (!queue_->Fits(t.arrival_delay)) {
    if (f.in_flight == 0) flows_.erase(key);
    queue_->Fail(topology_->OverflowError(src, dst, bytes, dim));
    return;
  }
  f.wire.Put(t);
  ++f.in_flight;
  queue_->After(t.arrival_delay, [this, key, delivered = std::move(delivered)] {
    auto it = flows_.find(key);
    if (--it->second.in_flight == 0) flows_.erase(it);
    delivered();
  });
}

}  // namespace genie::sim
