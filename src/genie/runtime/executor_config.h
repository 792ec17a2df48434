// ExecutorConfig: everything the Executor needs besides the trace and the backend, already
// resolved from system.json / memory.json / command-line flags (runtime/run_setup builds it).
// Shared read-only by every rank's Executor; any thread may read it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/compute/compute_model.h"
#include "genie/config/memory_config.h"
#include "genie/runtime/collective_runner.h"
#include "genie/trace/comm_groups.h"

namespace genie::runtime {

struct CollectiveChoice {
  std::vector<collective::Algorithm> algorithms = {collective::Algorithm::kRing};  // per dim
  int direct_window = 0;
  std::string custom_path;  // *-implementation-custom
};


struct ExecutorConfig {
  int world_size = 0;
  compute::ComputeParams compute;
  LocalCosts costs;
  // MEM_LOAD / MEM_STORE cost model (memory.json); none given = such nodes take no time.
  std::optional<config::MemoryConfig> memory;
  std::map<CollectiveType, CollectiveChoice> implementations;  // missing type -> ring
  // Chunks, active chunks, channels, slice, topology dims and optimisation; algorithms and
  // custom_path are filled per collective from `implementations`.
  collective::PlanOptions plan;
  collective::SchedulingPolicy policy = collective::SchedulingPolicy::kLifo;
  trace::CommGroups groups;      // from the comm-group file; METADATA groups are per rank
  bool verify = false;           // move real data and check every collective's result
};

}  // namespace genie::runtime
