#include "genie/sim/network_model.h"

#include "genie/sim/congestion_aware_model.h"
#include "genie/sim/congestion_unaware_model.h"
#include "genie/sim/flow_model.h"

namespace genie::sim {

const char* NetworkModelName(NetworkModelKind kind) {
  switch (kind) {
    case NetworkModelKind::kCongestionAware: return "aware";
    case NetworkModelKind::kFlow: return "flow";
    case NetworkModelKind::kCongestionUnaware: break;
  }
  return "unaware";
}

std::optional<NetworkModelKind> ParseNetworkModelKind(const std::string& text) {
  for (const char* s : {"unaware", "congestion_unaware", "congestion-unaware",
                        "CongestionUnaware"}) {
    if (text == s) return NetworkModelKind::kCongestionUnaware;
  }
  for (const char* s : {"aware", "congestion_aware", "congestion-aware", "CongestionAware"}) {
    if (text == s) return NetworkModelKind::kCongestionAware;
  }
  if (text == "flow") return NetworkModelKind::kFlow;
  return std::nullopt;
}

std::unique_ptr<NetworkModel> MakeNetworkModel(NetworkModelKind kind, const Topology* topology,
                                               EventQueue* queue) {
  if (kind == NetworkModelKind::kFlow) return std::make_unique<FlowModel>(topology, queue);
  if (kind == NetworkModelKind::kCongestionAware) {
    return std::make_unique<CongestionAwareModel>(topology, queue);
  }
  return std::make_unique<CongestionUnawareModel>(topology, queue);
}

}  // namespace genie::sim
