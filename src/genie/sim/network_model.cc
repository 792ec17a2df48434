#include "genie/sim/network_model.h"

#include "genie/sim/congestion_aware_model.h"
#include "genie/sim/congestion_unaware_model.h"

namespace genie::sim {

const char* NetworkModelName(NetworkModelKind kind) {
  return kind == NetworkModelKind::kCongestionAware ? "aware" : "unaware";
}

std::optional<NetworkModelKind> ParseNetworkModelKind(const std::string& text) {
  for (const char* s : {"unaware", "congestion_unaware", "congestion-unaware",
                        "CongestionUnaware"}) {
    if (text == s) return NetworkModelKind::kCongestionUnaware;
  }
  for (const char* s : {"aware", "congestion_aware", "congestion-aware", "CongestionAware"}) {
    if (text == s) return NetworkModelKind::kCongestionAware;
  }
  return std::nullopt;
}

std::unique_ptr<NetworkModel> MakeNetworkModel(NetworkModelKind kind, const Topology* topology,
                                               EventQueue* queue) {
  if (kind == NetworkModelKind::kCongestionAware) {
    return std::make_unique<CongestionAwareModel>(topology, queue);
  }
  return std::make_unique<CongestionUnawareModel>(topology, queue);
}

}  // namespace genie::sim
