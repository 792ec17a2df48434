// CongestionUnawareModel: ASTRA-sim's congestion-unaware analytical network. A message costs
// floor(hops * latency + bytes / bw) ns on the first dimension where the endpoints' addresses
// differ (Topology::UnawareDelay); messages never delay one another. Single-threaded.
#pragma once

#include "genie/sim/network_model.h"

namespace genie::sim {

class CongestionUnawareModel final : public NetworkModel {
 public:
  CongestionUnawareModel(const Topology* topology, EventQueue* queue)
      : topology_(topology), queue_(queue) {}
  NetworkModelKind kind() const override { return NetworkModelKind::kCongestionUnaware; }
  void Transmit(int src, int dst, Bytes bytes, std::function<void()> delivered) override;

 private:
  const Topology* topology_;
  EventQueue* queue_;
};

}  // namespace genie::sim
