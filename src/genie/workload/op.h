// Op: one Chakra node decoded into what it means for execution, after every quirk of real traces
// has been resolved by the trace layer (attribute widths, defaults, CPU-side collective wrappers,
// implied peers, pg_name normalisation). The executor, simulator and inspector read Ops, never
// raw protobuf attributes. Plain value type; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/spec/collective_type.h"

namespace genie {

using NodeId = uint64_t;

enum class OpKind : uint8_t {
  kInvalid,   // INVALID_NODE: skipped (completes immediately)
  kMetadata,  // METADATA_NODE: takes no time
  kMemLoad,   // MEM_LOAD_NODE: remote-mem-latency + tensor_size / remote-mem-bw
  kMemStore,  // MEM_STORE_NODE: same cost model as kMemLoad
  kCompute,   // COMP_NODE, or a CPU-side collective wrapper without comm_type
  kCollective,
  kSend,
  kRecv,
};

const char* OpKindName(OpKind kind);

// The process group a node refers to: kWorldGroup is every rank of the workload.
inline constexpr int64_t kWorldGroup = -1;

struct Op {
  NodeId id = 0;
  std::string name;
  OpKind kind = OpKind::kInvalid;
  bool is_cpu_op = false;          // is_cpu_op attribute (bool or int in real traces); default false

  // Dependencies as written (the tracker decides which ctrl_deps count).
  std::vector<NodeId> data_deps;
  std::vector<NodeId> ctrl_deps;

  // Compute and memory.
  TimeNs duration_ns = 0;          // duration_micros * 1000
  uint64_t num_ops = 0;            // for the roofline model (0 = absent)
  uint64_t tensor_size = 0;        // bytes touched (roofline) or moved (MEM_LOAD/STORE)
  int64_t tensor_loc = 0;

  // Communication.
  CollectiveType coll_type = CollectiveType::kAllReduce;
  Bytes comm_size = 0;             // meaning per REFERENCE §2 (all-gather: each rank's input)
  int64_t group = kWorldGroup;     // normalised pg_name ("1.0" -> 1, "" -> world)
  int src = -1;                    // SEND/RECV peers; own rank filled in when implied
  int dst = -1;
  int64_t tag = 0;
  int64_t priority = 0;            // comm_priority (EXPLICIT scheduling)
  std::vector<bool> involved_dim;  // empty = all dimensions
};

}  // namespace genie
