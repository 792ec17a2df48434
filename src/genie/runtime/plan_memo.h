// PlanMemo: a real rank's plans of the collectives it has run, compacted, so that the same
// collective in the next iteration starts without being planned again. Planning an 8-rank ring
// all-reduce costs a rank more CPU than one of its 8 KiB steps, all ranks pay it at once as the
// collective starts, and on hosts whose cores the ranks share that time is counted as the
// network's (docs/notes/2026-12-04-prediction-accuracy-what-moved-ratios.md,
// "Software-bound steps").
//
// Keyed by everything the planner reads (MemoKey); planned on a miss with
// collective::PlanChunk per chunk, as a simulation plans them. Holds at most kMaxSteps steps:
// past that it starts again empty, and a plan larger than that alone is not kept (a trace
// whose collectives need more per iteration plans as before). Owned by one Executor; its loop
// thread only. The chunks it hands out are immutable and shared: a runner may hold them after the
// memo has dropped them.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/common/status.h"
#include "genie/runtime/compact_chunk.h"

namespace genie::runtime {

// Every input of collective::PlanChunk for member `group_index` of `spec`, as words.
// tree_stream counts only by its parity: that is all the planner reads of it (the double
// binary tree's choice of tree), and it grows every iteration.
PlanKey MemoKey(const collective::CollectiveSpec& spec, int group_index);

class PlanMemo {
 public:
  using Chunks = std::vector<std::shared_ptr<const CompactChunk>>;
  static constexpr uint64_t kMaxSteps = 1 << 18;  // ~12 MB of steps and dependents

  // Every chunk of member `group_index`'s plan of `spec`, compact for `world` ranks: the
  // remembered ones, or planned now. Null when the chunks do not all run on chunk 0's
  // dimensions (the caller then plans the collective as a whole); a planning error as is.
  Result<std::shared_ptr<const Chunks>> Get(const collective::CollectiveSpec& spec, int group_index,
                                            int world);
  uint64_t held_steps() const { return steps_; }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

 private:
  struct KeyHash {
    size_t operator()(const PlanKey& k) const { return static_cast<size_t>(k.hash); }
  };
  std::unordered_map<PlanKey, std::shared_ptr<const Chunks>, KeyHash> plans_;
  uint64_t steps_ = 0;  // held by plans_
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace genie::runtime
