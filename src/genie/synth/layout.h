// Layout and Placement: how a training job is cut across ranks. Layout is what the user asks for
// (degrees of data, tensor, pipeline, sequence/context and expert parallelism, ZeRO stage,
// micro-batches, pipeline schedule, rank order); Placement maps a rank to its coordinate in each
// dimension and to the process groups it belongs to, with the group ids written to the
// comm-group file. Rank order is mixed-radix with the first listed dimension varying fastest
// (STG: dp,tp,sp,ep,pp; Megatron: tp,sp,ep,dp,pp). Plain values; any thread may read.
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::synth {

enum class Dim : int { kDp = 0, kTp = 1, kSp = 2, kEp = 3, kPp = 4 };
inline constexpr int kNumDims = 5;
const char* DimName(Dim d);  // "dp", "tp", "sp", "ep", "pp"

enum class PipelineSchedule { k1F1B, kGPipe };
enum class GradSync { kAuto, kPerMicrobatch, kPerStep };

struct Layout {
  int dp = 1, tp = 1, pp = 1, sp = 1, ep = 1;
  // 0: all-reduce gradients; 1, 2: reduce-scatter gradients and all-gather the updated
  // parameters once per step (distributed optimizer); 3: FSDP — parameters all-gathered per
  // layer before its forward and its backward, gradients reduce-scattered per layer.
  int zero = 0;
  int microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  int sequence_parallel = -1;  // Megatron SP for TP (all-gather/reduce-scatter): -1 auto = on
  GradSync grad_sync = GradSync::kAuto;
  std::vector<Dim> order;  // fastest-varying first; empty = the convention's
  Bytes bucket_bytes = 0;  // per-step gradient buckets; 0 = 40M elements (Megatron's)

  int degree(Dim d) const;
};

// "dp,tp,sp,ep,pp" (every dimension once; "cp" is accepted for sp).
Result<std::vector<Dim>> ParseOrder(std::string_view text);

// Process groups a rank takes part in. kDpSp is data x sequence parallel together (Megatron's
// gradient group when sp > 1).
enum class GroupKind : int { kDp = 0, kTp = 1, kSp = 2, kEp = 3, kDpSp = 4 };
inline constexpr int kNumGroupKinds = 5;

class Placement {
 public:
  // `order` must name every dimension once.
  Placement(const Layout& layout, const std::vector<Dim>& order);

  int world() const { return world_; }
  int Coord(int rank, Dim d) const { return (rank / stride_[Index(d)]) % degree_[Index(d)]; }
  // The rank with the same coordinates as `rank` except `d` = `coord`.
  int WithCoord(int rank, Dim d, int coord) const {
    return rank + (coord - Coord(rank, d)) * stride_[Index(d)];
  }
  int GroupSize(GroupKind kind) const;
  // The group's id in the comm-group file; 0 when the group has one member (no collective).
  int64_t GroupId(GroupKind kind, int rank) const;
  std::vector<int> Members(GroupKind kind, int rank) const;  // ascending
  // Writes {"<id>": [ranks...], ...} for every group of two or more members, ids ascending.
  void WriteCommGroups(std::ostream& out) const;

 private:
  static int Index(Dim d) { return static_cast<int>(d); }
  std::vector<Dim> Varying(GroupKind kind) const;

  std::array<int, kNumDims> degree_{};
  std::array<int, kNumDims> stride_{};
  std::vector<Dim> order_;
  std::array<int64_t, kNumGroupKinds> base_{};  // first id of each kind
  int world_ = 1;
};

}  // namespace genie::synth
