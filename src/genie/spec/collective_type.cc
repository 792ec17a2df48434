#include "genie/spec/collective_type.h"

#include <algorithm>
#include <cctype>

namespace genie {

const char* CollectiveTypeName(CollectiveType type) {
  switch (type) {
    case CollectiveType::kAllReduce: return "all_reduce";
    case CollectiveType::kReduce: return "reduce";
    case CollectiveType::kAllGather: return "all_gather";
    case CollectiveType::kGather: return "gather";
    case CollectiveType::kScatter: return "scatter";
    case CollectiveType::kBroadcast: return "broadcast";
    case CollectiveType::kAllToAll: return "all_to_all";
    case CollectiveType::kReduceScatter: return "reduce_scatter";
    case CollectiveType::kReduceScatterBlock: return "reduce_scatter_block";
    case CollectiveType::kBarrier: return "barrier";
  }
  return "unknown";
}

std::optional<CollectiveType> ParseCollectiveType(const std::string& text) {
  // Accept "all_reduce", "all-reduce", "ALL_REDUCE", "allreduce".
  std::string norm;
  for (char c : text) {
    if (c == '-' || c == '_' || c == ' ') continue;
    norm += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (int i = 0; i <= static_cast<int>(CollectiveType::kBarrier); ++i) {
    auto type = static_cast<CollectiveType>(i);
    std::string name = CollectiveTypeName(type);
    name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
    if (name == norm) return type;
  }
  return std::nullopt;
}

}  // namespace genie
