// CollectiveType: which collective a COMM_COLL node (or a planned collective) performs, and its
// names. The vocabulary the trace reader, the workload and the collective planner share, kept
// below all three so that the planner needs nothing of traces. Like Op and NodeId it lives in
// namespace genie. Value type; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace genie {

enum class CollectiveType : uint8_t {
  kAllReduce = 0, kReduce = 1, kAllGather = 2, kGather = 3, kScatter = 4, kBroadcast = 5,
  kAllToAll = 6, kReduceScatter = 7, kReduceScatterBlock = 8, kBarrier = 9,
};

// "all_reduce", "all_gather", ... (the CLI's spelling); ParseCollectiveType accepts these,
// ASTRA-sim's "all-reduce" and Chakra's "ALL_REDUCE".
const char* CollectiveTypeName(CollectiveType type);
std::optional<CollectiveType> ParseCollectiveType(const std::string& text);

}  // namespace genie
