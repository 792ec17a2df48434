// NetworkConfig: ASTRA-sim's analytical network.yml (`--network-configuration`): one entry per
// topology dimension (dim 0 varies fastest in rank numbering) giving the building block
// (Ring | FullyConnected | Switch), its NPU count, link bandwidth in GB/s (per link, per
// direction; GB = 2^30 bytes as ASTRA-sim computes it) and link latency in ns.
// Value type, built once at start-up; any thread may read it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"

namespace genie::config {

enum class TopologyKind { kRing, kFullyConnected, kSwitch };
const char* TopologyKindName(TopologyKind kind);  // "Ring", "FullyConnected", "Switch"

struct NetworkConfig {
  std::string path;  // where it was read from ("" when built in code)
  std::vector<TopologyKind> topology;
  std::vector<int> npus_count;
  std::vector<double> bandwidth_gbps;
  std::vector<double> latency_ns;

  int dims() const { return static_cast<int>(topology.size()); }
  int total_npus() const;  // product of npus_count
  nlohmann::json ToJson() const;
};

// Reads and validates a network.yml. Errors name the file and the key and say what to fix.
Result<NetworkConfig> LoadNetworkConfig(const std::string& path);
// Same, from YAML text; `origin` names the source in errors.
Result<NetworkConfig> ParseNetworkConfig(const std::string& text, const std::string& origin);
// Checks list lengths and value ranges (also for configs built in code).
Status ValidateNetworkConfig(const NetworkConfig& config);

}  // namespace genie::config
