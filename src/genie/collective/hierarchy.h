// Hierarchy: a collective over a multi-dimensional logical topology (dims, dim 0 fastest
// varying: group index g has digit g / (n0...n{d-1}) % nd in dimension d), as ASTRA-sim runs
// it — one algorithm per dimension, `baseline` (all-reduce each dimension in turn) or
// `localBWAware` (reduce-scatter up the lower dimensions, all-reduce on the top one, all-gather
// back down) — plus `involved_dim`, which restricts a collective to the dimensions it names
// (independent collectives among the ranks that share the other digits). Internal to
// genie_collective; pure functions; any thread.
#pragma once

#include <memory>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/phase.h"
#include "genie/common/status.h"

namespace genie::collective::internal {

// The spec one rank actually runs: group = its involved subgroup (mixed-radix order), dims =
// the involved dimensions (ids kept in dim_ids), one algorithm per dimension.
struct Effective {
  CollectiveSpec spec;
  int index = 0;               // this rank's index in spec.group
  std::vector<int> dim_ids;    // original dimension number of each spec.options.dims entry
  bool flat = true;            // one dimension (or a flattened oneX algorithm)
  std::shared_ptr<const trace::CustomAlgorithm> custom;  // spec.options.custom when it runs
};
Result<Effective> MakeEffective(const CollectiveSpec& spec, int group_index);

// True when `op` is planned dimension by dimension (all-reduce, reduce-scatter, all-gather);
// every other collective runs flat over the (involved) group.
bool Hierarchical(CollectiveType op);

// The phases of one chunk for all-reduce / reduce-scatter / all-gather (any number of dims).
std::vector<PhaseSpec> HierarchicalPhases(const Effective& e, int chunk);

// Member g's final block of a reduce-scatter, or its own block of an all-gather, in chunk k.
ByteRange NestedBlock(const Effective& e, int g, int chunk);

}  // namespace genie::collective::internal
