// Hierarchy: a collective over a multi-dimensional logical topology (dims, dim 0 fastest
// varying: group index g has digit g / (n0...n{d-1}) % nd in dimension d), as ASTRA-sim runs
// it — one algorithm per dimension, `baseline` (all-reduce each dimension in turn) or
// `localBWAware` (reduce-scatter up the lower dimensions, all-reduce on the top one, all-gather
// back down), all-to-all on every dimension in turn — plus `involved_dim`, which restricts a
// collective to the dimensions it names (independent collectives among the ranks that share the
// other digits). Internal to genie_collective; pure functions; any thread.
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
  int index = 0;             // this rank's index in spec.group
  std::vector<int> dim_ids;  // original dimension number of each spec.options.dims entry
  bool flat = true;          // one dimension (or a flattened oneX algorithm)
  std::shared_ptr<const spec::CustomAlgorithm> custom;  // spec.options.custom when it runs
};
Result<Effective> MakeEffective(const CollectiveSpec& spec, int group_index);

// True when e's collective is planned dimension by dimension (all-reduce, reduce-scatter,
// all-gather; all-to-all on more than one dimension of more than one member); every other
// collective, and a custom algorithm, runs flat over the (involved) group.
bool Hierarchical(const Effective& e);

// The phases of one chunk for all-reduce / reduce-scatter / all-gather / all-to-all (any
// number of dims; an all-to-all's phases start with the local copies that re-arrange it).
std::vector<PhaseSpec> HierarchicalPhases(const Effective& e, int chunk);

// Mixed-radix helpers shared by the planners of the two files: group index g's digit in each
// dimension (dim 0 fastest varying), and the stride of dimension d (n0 x ... x n{d-1}).
std::vector<int> Digits(int g, const std::vector<int>& dims);
int Stride(const std::vector<int>& dims, size_t d);
// A phase of collective `op` on dimension d among e's rank and its members there, with that
// dimension's algorithm; blocks and region are left for the caller.
PhaseSpec DimPhase(const Effective& e, size_t d, CollectiveType op);

// All-to-all on several dimensions (hierarchy_all_to_all.cc): the dimensions it runs a phase
// on (those of more than one member), and one chunk's phases.
std::vector<size_t> AllToAllPhaseDims(const std::vector<int>& dims);
std::vector<PhaseSpec> AllToAllPhases(const Effective& e, int chunk);

// The working buffer of e's rank: BufferBytes, but for an all-to-all on several dimensions
// the input followed, per chunk, by its staging areas and output (hierarchy_all_to_all.cc).
Bytes EffectiveBufferBytes(const Effective& e);

// All-to-all on several dimensions: where source `source` (group index)'s block for e's rank
// lands in chunk `chunk`, and where it started in the source's buffer.
struct AllToAllSlot {
  int source = 0;
  ByteRange range;
  Bytes source_offset = 0;
};
std::vector<AllToAllSlot> AllToAllOutput(const Effective& e, int chunk);

// Member g's final block of a reduce-scatter, or its own block of an all-gather, in chunk k.
ByteRange NestedBlock(const Effective& e, int g, int chunk);

}  // namespace genie::collective::internal
