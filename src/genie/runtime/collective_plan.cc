#include "genie/runtime/collective_plan.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <numeric>

#include "genie/collective/planner.h"

namespace genie::runtime {

Result<std::vector<int>> GroupMembers(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank) {
  std::vector<int> members;
  const std::vector<int>* found = nullptr;
  if (op.group != kWorldGroup) {
    found = config.groups.Find(op.group);
    if (found == nullptr) found = metadata_groups.Find(op.group);
    if (found == nullptr) {
      // ASTRA-sim falls back to the world group for an unknown group; so do we, loudly.
      static bool warned = false;
      if (!warned) {
        spdlog::warn(
            "rank {}: node {} names process group {} that no comm-group file or "
            "METADATA node defines; using all ranks (pass --comm-group FILE)",
            rank, op.id, op.group);
        warned = true;
      }
    }
  }
  if (found != nullptr) {
    members = *found;
  } else {
    members.resize(static_cast<size_t>(config.world_size));
    std::iota(members.begin(), members.end(), 0);
  }
  if (std::find(members.begin(), members.end(), rank) == members.end()) {
    return Status::InvalidArgument("rank " + std::to_string(rank) + ", node " +
                                   std::to_string(op.id) + " (" + op.name + "): process group " +
                                   std::to_string(op.group) +
                                   " does not contain this rank; check the comm-group file");
  }
  for (int r : members) {
    if (r < 0 || r >= config.world_size) {
      return Status::InvalidArgument("process group " + std::to_string(op.group) + " names rank " +
                                     std::to_string(r) + " but the workload has " +
                                     std::to_string(config.world_size) + " ranks");
    }
  }
  return members;
}

Result<CollectivePlan> SpecCollective(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank) {
  CollectivePlan out;
  GENIE_ASSIGN_OR_RETURN(out.members, GroupMembers(op, config, metadata_groups, rank));
  const std::vector<int>& members = out.members;
  collective::CollectiveSpec& spec = out.spec;
  spec.type = op.coll_type;
  spec.size = op.comm_size;
  spec.group = members;
  if (op.src >= 0) {
    auto it = std::find(members.begin(), members.end(), op.src);
    if (it != members.end()) spec.root = static_cast<int>(it - members.begin());
  }
  spec.options = config.plan;
  auto choice_it = config.implementations.find(op.coll_type);
  CollectiveChoice choice =
      choice_it != config.implementations.end() ? choice_it->second : CollectiveChoice{};
  spec.options.algorithms = choice.algorithms;
  spec.options.direct_window = choice.direct_window;
  spec.options.custom = choice.custom;
  if (!op.involved_dim.empty()) spec.options.involved_dim = op.involved_dim;
  // The logical topology applies to the world group; a subgroup runs as one dimension.
  int dims_product = 1;
  for (int d : spec.options.dims) dims_product *= d;
  if (spec.options.dims.empty() || dims_product != static_cast<int>(members.size())) {
    spec.options.dims = {static_cast<int>(members.size())};
    spec.options.involved_dim.clear();
    if (spec.options.algorithms.size() > 1) spec.options.algorithms.resize(1);
  }
  out.group_index =
      static_cast<int>(std::find(members.begin(), members.end(), rank) - members.begin());
  for (size_t i = 0; i < spec.options.algorithms.size(); ++i) {
    if (i) out.algorithm += ",";
    out.algorithm += collective::AlgorithmName(spec.options.algorithms[i]);
  }
  return out;
}

Result<CollectivePlan> PlanCollective(const Op& op, const ExecutorConfig& config,
                                      const trace::CommGroups& metadata_groups, int rank) {
  GENIE_ASSIGN_OR_RETURN(CollectivePlan out, SpecCollective(op, config, metadata_groups, rank));
  auto schedule = collective::Plan(out.spec, out.group_index);
  if (!schedule.ok()) {
    return schedule.status().WithContext("rank " + std::to_string(rank) + ", node " +
                                         std::to_string(op.id) + " (" + op.name + ")");
  }
  out.schedule = std::move(schedule).value();
  return out;
}

}  // namespace genie::runtime
