// The flow model's tests' harness (flow_model_test.cc, flow_model_fabric_test.cc): messages
// sent at given times through a flow model on a topology, their delivery times read back.
// Links in these tests run at 1 B/ns (kOneBytePerNs GB/s) so that figures are round.
// Test-only; one thread.
#pragma once

#include <memory>
#include <vector>

#include "genie/config/network_config.h"
#include "genie/sim/event_queue.h"
#include "genie/sim/flow_model.h"
#include "genie/sim/topology.h"

namespace genie::sim::testing {

constexpr double kOneBytePerNs = 1e9 / (1 << 30);  // GB/s

class Harness {
 public:
  explicit Harness(const config::NetworkConfig& net)
      : topology_(*Topology::Create(net)),
        model_(MakeNetworkModel(NetworkModelKind::kFlow, &topology_, &queue_)) {}
  // `flow`: Transmit's flow id, a collective chunk (0: none).
  size_t Send(int src, int dst, Bytes bytes, TimeNs at = 0, uint16_t channel = 0,
              uint64_t flow = 0) {
    size_t i = delivered_.size();
    delivered_.push_back(-1);
    queue_.At(at, [this, src, dst, bytes, i, channel, flow] {
      model_->Transmit(src, dst, bytes, flow, channel, [this, i] { delivered_[i] = queue_.Now(); });
    });
    return i;
  }
  const std::vector<TimeNs>& Run() {
    queue_.Run();
    return delivered_;
  }
  FlowModel& model() { return static_cast<FlowModel&>(*model_); }
  // Folds the topology's links (sim/symmetry.h), before any Send.
  // `copies`: as Topology::set_link_fold (false: host slots, each link one link).
  void Fold(std::vector<int> fold, bool copies = true) {
    topology_.set_link_fold(std::move(fold), copies);
  }
  const EventQueue& queue() const { return queue_; }
  const Topology& topology() const { return topology_; }

 private:
  EventQueue queue_;
  Topology topology_;
  std::unique_ptr<NetworkModel> model_;
  std::vector<TimeNs> delivered_;
};

}  // namespace genie::sim::testing
