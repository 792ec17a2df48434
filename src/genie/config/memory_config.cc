#include "genie/config/memory_config.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>

#include "genie/common/checked_math.h"
#include "genie/config/json_value_text.h"
#include "genie/config/limits.h"
#include "genie/common/input_file.h"

namespace genie::config {
namespace {
using json = nlohmann::json;

std::string NumText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

const char* MemoryTypeName(MemoryType type) {
  switch (type) {
    case MemoryType::kNoMemoryExpansion: return "NO_MEMORY_EXPANSION";
    case MemoryType::kPerNodeMemoryExpansion: return "PER_NODE_MEMORY_EXPANSION";
    case MemoryType::kPerNpuMemoryExpansion: return "PER_NPU_MEMORY_EXPANSION";
    case MemoryType::kMemoryPool: return "MEMORY_POOL";
  }
  return "?";
}

TimeNs MemoryConfig::AccessTimeNs(Bytes tensor_size) const {
  if (remote_mem_bw_gbps <= 0) return remote_mem_latency_ns;
  // ASTRA-sim: latency + (uint64)((size / (bw * 1e9)) * FREQ), FREQ = 1e9 (1 cycle = 1 ns).
  double seconds = static_cast<double>(tensor_size) / (remote_mem_bw_gbps * 1e9);
  // Saturates for sizes no memory moves within int64 ns; the simulator refuses kMaxTimeNs.
  return SaturatingAdd(remote_mem_latency_ns, SaturatingTimeNs(seconds * 1e9));
}

int MemoryConfig::QueueOf(int rank) const {
  switch (type) {
    case MemoryType::kPerNodeMemoryExpansion:
      return num_npus_per_node > 0 ? rank / num_npus_per_node : 0;
    case MemoryType::kMemoryPool: return 0;
    default: return -1;
  }
}

json MemoryConfig::ToJson() const {
  json j;
  j["path"] = path;
  j["memory-type"] = MemoryTypeName(type);
  j["remote-mem-latency"] = remote_mem_latency_ns;
  j["remote-mem-bw"] = remote_mem_bw_gbps;
  if (type == MemoryType::kPerNodeMemoryExpansion) {
    j["num-nodes"] = num_nodes;
    j["num-npus-per-node"] = num_npus_per_node;
  }
  return j;
}

Result<MemoryConfig> ParseMemoryConfig(const std::string& text, const std::string& origin) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(origin + ": not a JSON object (expected e.g. "
                                   "{\"memory-type\": \"NO_MEMORY_EXPANSION\"})");
  }
  auto err = [&](const char* key, const std::string& what) {
    return Status::InvalidArgument(origin + ": key \"" + key + "\": " + what);
  };
  // A number in [lo, hi] (config/limits.h), or exactly 0 when `zero_ok`.
  auto number = [&](const char* key, double* out, double lo, double hi, const char* unit,
                    bool zero_ok) -> Status {
    if (!j.contains(key)) return Status::Ok();
    if (!j[key].is_number()) {
      return err(key, "expected a number, found " + JsonValueText(j[key]));
    }
    const double d = j[key].get<double>();
    if (!(d >= lo && d <= hi) && !(zero_ok && d == 0)) {
      return err(key, NumText(d) + " is out of range; give " + (zero_ok ? "0 or " : "") +
                          "a number from " + NumText(lo) + " to " + NumText(hi) + unit);
    }
    *out = d;
    return Status::Ok();
  };
  MemoryConfig c;
  c.path = origin;
  if (j.contains("memory-type")) {
    if (!j["memory-type"].is_string()) return err("memory-type", "expected a string");
    std::string t = j["memory-type"].get<std::string>();
    bool found = false;
    for (MemoryType m : {MemoryType::kNoMemoryExpansion, MemoryType::kPerNodeMemoryExpansion,
                         MemoryType::kPerNpuMemoryExpansion, MemoryType::kMemoryPool}) {
      if (t == MemoryTypeName(m)) {
        c.type = m;
        found = true;
      }
    }
    if (!found) {
      return err("memory-type", "unknown value \"" + t +
                                    "\" (use NO_MEMORY_EXPANSION, PER_NODE_MEMORY_EXPANSION, "
                                    "PER_NPU_MEMORY_EXPANSION or MEMORY_POOL)");
    }
  }
  double latency = 0, nodes = 0, per_node = 0;
  GENIE_RETURN_IF_ERROR(number("remote-mem-latency", &latency, 0, kMaxDelayNs, " ns", false));
  GENIE_RETURN_IF_ERROR(number("remote-mem-bw", &c.remote_mem_bw_gbps, kMinBandwidthGbps,
                               kMaxBandwidthGbps, " GB/s", true));
  // Counts: whole numbers (a fraction is truncated, as ASTRA-sim's int fields do).
  GENIE_RETURN_IF_ERROR(number("num-nodes", &nodes, 1, kMaxNpus, "", false));
  GENIE_RETURN_IF_ERROR(number("num-npus-per-node", &per_node, 1, kMaxNpus, "", false));
  c.remote_mem_latency_ns = static_cast<TimeNs>(latency);
  c.num_nodes = static_cast<int>(nodes);
  c.num_npus_per_node = static_cast<int>(per_node);
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "memory-type" && k != "remote-mem-latency" && k != "remote-mem-bw" &&
        k != "num-nodes" && k != "num-npus-per-node") {
      c.warnings.push_back("ignoring unknown memory key \"" + k + "\" (ASTRA-sim ignores it too)");
    } else if ((k == "num-nodes" || k == "num-npus-per-node") &&
               c.type != MemoryType::kPerNodeMemoryExpansion) {
      c.warnings.push_back("key \"" + k + "\" is used only by PER_NODE_MEMORY_EXPANSION; " +
                           MemoryTypeName(c.type) + " does not read it (neither does ASTRA-sim)");
    }
  }
  for (const std::string& w : c.warnings) spdlog::warn("{}: {}", origin, w);
  if (c.type != MemoryType::kNoMemoryExpansion && c.remote_mem_bw_gbps <= 0) {
    return err("remote-mem-bw", std::string("must be > 0 GB/s for ") + MemoryTypeName(c.type));
  }
  if (c.type == MemoryType::kPerNodeMemoryExpansion && c.num_npus_per_node <= 0) {
    return err("num-npus-per-node", "must be > 0 for PER_NODE_MEMORY_EXPANSION");
  }
  return c;
}

Result<MemoryConfig> LoadMemoryConfig(const std::string& path) {
  GENIE_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, "memory configuration"));
  return ParseMemoryConfig(text, path);
}

}  // namespace genie::config
