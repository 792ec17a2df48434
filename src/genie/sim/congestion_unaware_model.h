// CongestionUnawareModel: ASTRA-sim's congestion-unaware analytical network. A message costs
// floor(hops * latency + bytes / bw) ns on the first dimension where the endpoints' addresses
// differ (Topology::UnawareDelay); different messages never delay one another.
// One exception keeps it physical: the messages of one flow (same src, dst and nonzero flow
// id: the wire pieces, slices and channels, of one chunk of one collective) are one stream of
// bytes, serialized one after the other on a Wire at that dimension's bandwidth. Otherwise
// cutting a message into k slices sent at once would make it k times faster. A message that
// finds its flow idle costs exactly ASTRA-sim's delay. Single-threaded.
#pragma once

#include <map>
#include <tuple>

#include "genie/sim/network_model.h"
#include "genie/sim/wire.h"

namespace genie::sim {

class CongestionUnawareModel final : public NetworkModel {
 public:
  CongestionUnawareModel(const Topology* topology, EventQueue* queue)
      : topology_(topology), queue_(queue) {}
  NetworkModelKind kind() const override { return NetworkModelKind::kCongestionUnaware; }
  void Transmit(int src, int dst, Bytes bytes, uint64_t flow,
                std::function<void()> delivered) override;

 private:
  struct Flow {
    Wire wire;
    uint64_t in_flight = 0;  // dropped when nothing is in flight (the map stays small)
  };
  using FlowKey = std::tuple<int, int, uint64_t>;  // src, dst, flow id

  const Topology* topology_;
  EventQueue* queue_;
  std::map<FlowKey, Flow> flows_;
};

}  // namespace genie::sim
