// CollectiveSpec: everything the planner needs to know about one collective call, and the plan
// options that shape its wire traffic (chunks, channels, slice size, per-dimension algorithms).
// Built by the executor from an Op plus the system configuration; consumed by Plan(). Value
// type; any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/spec/collective_type.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::collective {

// Algorithm names follow ASTRA-sim's system.json where they exist.
enum class Algorithm : uint8_t {
  kRing, kDirect, kHalvingDoubling, kDoubleBinaryTree, kPairwise, kTree,
  kOneRing, kOneDirect, kOneHalvingDoubling, kCustom,
  // NCCL's double tree (ncclGetDtree, half the data per tree); doubleBinaryTree is ASTRA-sim's.
  kNcclDoubleBinaryTree,
};
const char* AlgorithmName(Algorithm a);          // "ring", "direct", "halvingDoubling", ...
bool ParseAlgorithm(const std::string& text, Algorithm* out, int* direct_window);

// The CLI spelling of collective types: CollectiveTypeName / ParseCollectiveType (spec/);
// ParseCollectiveOp also accepts PyTorch's "alltoallv".
const char* CollectiveOpName(CollectiveType type);
bool ParseCollectiveOp(const std::string& text, CollectiveType* out);

enum class Optimization : uint8_t { kBaseline, kLocalBwAware };
enum class SchedulingPolicy : uint8_t { kLifo, kFifo, kExplicit };
// system.json's inter-dimension-scheduling: the order in which a chunk visits the dimensions.
// kBaseline: dimension 0 first (ASTRA-sim's default). kThemis: genie's implementation of the
// Themis policy (ISCA 2022) — each chunk orders the dimensions greedily by their accumulated
// load (docs/algorithms.md, "Themis").
enum class InterDimScheduling : uint8_t { kBaseline, kThemis };

struct PlanOptions {
  // One algorithm per dimension of `dims` (a single entry applies to every dimension).
  std::vector<Algorithm> algorithms = {Algorithm::kRing};
  int direct_window = 0;           // directK: at most K concurrent peers (0 = all)
  std::vector<int> dims;           // logical topology, dim 0 fastest; empty = one dim of N
  std::vector<bool> involved_dim;  // empty = all dims
  Optimization optimization = Optimization::kBaseline;
  InterDimScheduling inter_dim = InterDimScheduling::kBaseline;
  // GB/s per dimension of `dims`, for themis's load estimate (network.yml's bandwidth); empty
  // or a wrong length = every dimension equally fast.
  std::vector<double> dim_bandwidth;
  int chunks = 1;                  // preferred-dataset-splits
  int active_chunks = 1;           // active-chunks-per-dimension (0 = unlimited)
  int channels = 1;                // parallel flows per peer pair (NCCL channels)
  Bytes slice_bytes = 0;           // largest message on the wire (0 = no limit)
  // Algorithm::kCustom: the algorithm, loaded once by the caller (trace/custom_files.h) and
  // shared by every spec that runs it.
  std::shared_ptr<const spec::CustomAlgorithm> custom;
  // doubleBinaryTree: ASTRA-sim hands its two trees to successive streams (chunks) of a rank's
  // all-reduces in turn; this is how many such streams came before this collective, so chunk
  // k runs tree (tree_stream + k) mod 2. The executor sets it from the program order.
  uint32_t tree_stream = 0;
};

struct CollectiveSpec {
  CollectiveType type = CollectiveType::kAllReduce;
  Bytes size = 0;                  // Chakra comm_size semantics (REFERENCE §2)
  std::vector<int> group;          // global ranks, in group order; group[i] has group index i
  int root = 0;                    // group index of the root (broadcast, reduce, gather, scatter)
  uint32_t collective_id = 0;      // distinguishes concurrent collectives in message tags
  PlanOptions options;
};

}  // namespace genie::collective
