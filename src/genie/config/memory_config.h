// MemoryConfig: ASTRA-sim's remote-memory JSON (`--remote-memory-configuration`), the cost
// model of MEM_LOAD / MEM_STORE nodes: each access takes
// `remote-mem-latency + floor(tensor_size / remote-mem-bw)` ns (bw in GB/s = 10^9 B/s, as
// ASTRA-sim's AnalyticalRemoteMemory computes it). PER_NODE_MEMORY_EXPANSION and MEMORY_POOL
// serialise accesses (FIFO) per node / for the whole pool (runtime/remote_memory.h);
// PER_NPU_MEMORY_EXPANSION does not; NO_MEMORY_EXPANSION makes any access an error.
// Value type; any thread may read it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::config {

enum class MemoryType {
  kNoMemoryExpansion,
  kPerNodeMemoryExpansion,
  kPerNpuMemoryExpansion,
  kMemoryPool,
};
const char* MemoryTypeName(MemoryType type);  // "NO_MEMORY_EXPANSION", ...

struct MemoryConfig {
  std::string path;
  MemoryType type = MemoryType::kNoMemoryExpansion;
  TimeNs remote_mem_latency_ns = 0;  // "remote-mem-latency"
  double remote_mem_bw_gbps = 0;     // "remote-mem-bw"
  int num_nodes = 0;                 // "num-nodes" (PER_NODE_MEMORY_EXPANSION)
  int num_npus_per_node = 0;         // "num-npus-per-node" (PER_NODE_MEMORY_EXPANSION)
  // Keys the file set that genie (like ASTRA-sim) does not use, each with why; logged.
  std::vector<std::string> warnings;

  // Time one access of `tensor_size` bytes holds the memory, exactly as ASTRA-sim rounds it.
  TimeNs AccessTimeNs(Bytes tensor_size) const;
  // Which FIFO queue `rank`'s accesses wait in: -1 = none (PER_NPU: no contention),
  // node id (PER_NODE), 0 (MEMORY_POOL). Only meaningful when type != NO_MEMORY_EXPANSION.
  int QueueOf(int rank) const;
  nlohmann::json ToJson() const;
};

Result<MemoryConfig> LoadMemoryConfig(const std::string& path);
Result<MemoryConfig> ParseMemoryConfig(const std::string& text, const std::string& origin);

}  // namespace genie::config
