// CollectivePlan: one collective node of a rank's trace turned into the planner's input (the
// group's members, the CollectiveSpec with the configured algorithms and topology) and this
// rank's Schedule. The one place this is done, so that the Executor (when it issues the
// collective) and PlannedPeers (peer_set.h, before the first operation) see the same plan and
// hence the same peers. Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"
#include "genie/runtime/executor_config.h"
#include "genie/trace/comm_groups.h"
#include "genie/workload/op.h"

namespace genie::runtime {

struct CollectivePlan {
  std::vector<int> members;  // global ranks, group order
  int group_index = -1;      // this rank's index in members
  collective::CollectiveSpec spec;
  collective::Schedule schedule;
  std::string algorithm;  // "ring", "ring,direct", ...
};

// The members of op's process group: the comm-group file's, else the trace's METADATA
// groups', else (loudly, once) the world, as ASTRA-sim does. Errors name the rank and node.
Result<std::vector<int>> GroupMembers(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank);

// Everything but the schedule: members, spec, group index, algorithm (the Executor plans
// from it, whole or chunk by chunk).
Result<CollectivePlan> SpecCollective(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank);

// Plans collective `op` for `rank` (SpecCollective, then the whole schedule).
Result<CollectivePlan> PlanCollective(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank);

}  // namespace genie::runtime
