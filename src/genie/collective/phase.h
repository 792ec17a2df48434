// Phase: one chunk of a collective on one group of ranks (one topology dimension), as the
// algorithms see it — members by index, byte ranges of this rank's buffer — and PhaseBuilder,
// which collects an algorithm's logical steps (one message per step, peers as member indices).
// The planner then lowers logical steps to wire Steps (channels, slices, tags, global ranks).
// Internal to genie_collective; value types; any thread.
#pragma once

#include <cstdint>
#include <vector>

#include <memory>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::collective::internal {

// A local re-arrangement at the start of a phase: `from` copied to `to` in this rank's buffer.
struct LocalCopy {
  ByteRange from;
  ByteRange to;
};

struct PhaseSpec {
  CollectiveType op = CollectiveType::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  int direct_window = 0;               // directK (0 = every peer at once)
  std::vector<int> members;            // global ranks; index = member index
  int me = 0;                          // this rank's member index
  int root = 0;                        // member index of the root (rooted collectives)
  ByteRange region;                    // all-reduce / broadcast / reduce
  std::vector<ByteRange> blocks;       // per member (see ChunkGeometry)
  std::vector<ByteRange> recv_blocks;  // all-to-all output slots
  std::vector<int> order;              // position -> member of `blocks` in the buffer
  std::vector<LocalCopy> copies;       // run first; the algorithm's steps follow (hazards
                                       // order them after the copies of the bytes they touch)
  uint16_t dim = 0;
  uint32_t stream = 0;  // ASTRA-sim stream of this chunk (PlanOptions::tree_stream + chunk)
  std::shared_ptr<const spec::CustomAlgorithm> custom;  // Algorithm::kCustom
  int n() const { return static_cast<int>(members.size()); }
  int Peer(int offset) const { return ((me + offset) % n() + n()) % n(); }
};

// Peers are member indices; deps index earlier logical steps of the same phase.
struct LogicalStep {
  StepKind kind = StepKind::kSend;
  int send_to = -1;
  int recv_from = -1;
  ByteRange send;
  ByteRange recv;
  std::vector<uint32_t> deps;
  int channel = -1;  // fixed flow (custom algorithms); -1 = spread over the spec's channels
  ReduceCharge charge = ReduceCharge::kOnReceive;
};

class PhaseBuilder {
 public:
  using Deps = std::vector<uint32_t>;
  uint32_t Send(int to, ByteRange r, Deps deps = {});
  uint32_t Recv(int from, ByteRange r, bool reduce, Deps deps = {});
  // Receive (and reduce if asked) into r, then forward r to `to`.
  uint32_t RecvSend(int from, int to, ByteRange r, bool reduce, Deps deps = {});
  // Sets where step `i`'s reduction cost is charged (ReduceCharge).
  void SetCharge(uint32_t i, ReduceCharge c) { steps_[i].charge = c; }
  const std::vector<LogicalStep>& steps() const { return steps_; }
  std::vector<LogicalStep>& mutable_steps() { return steps_; }

 private:
  uint32_t Add(LogicalStep s);
  std::vector<LogicalStep> steps_;
};

// One function per algorithm family; each supports the ops documented in docs/algorithms.md
// and returns Unsupported for the others. The caller guarantees n() >= 1.
Status BuildRing(const PhaseSpec& p, PhaseBuilder* b);
Status BuildDirect(const PhaseSpec& p, PhaseBuilder* b);
Status BuildHalvingDoubling(const PhaseSpec& p, PhaseBuilder* b);
Status BuildDoubleBinaryTree(const PhaseSpec& p, PhaseBuilder* b);
Status BuildPairwise(const PhaseSpec& p, PhaseBuilder* b);
Status BuildTree(const PhaseSpec& p, PhaseBuilder* b);
Status BuildCustom(const PhaseSpec& p, PhaseBuilder* b);

// Shared pieces: NCCL's binary tree over n members (root 0) as ncclGetBtree defines it, and the
// rooted collectives every family falls back on.
int BtreeParent(int n, int v);  // -1 for v == 0
std::vector<int> BtreeChildren(int n, int v);

// Reduce `r` up a tree to member `root` (parent_of / children_of in member indices), then,
// when `broadcast`, send it back down. Appends to b; returns Ok.
struct TreeShape {
  std::vector<int> parent;                 // per member, -1 at the root
  std::vector<std::vector<int>> children;  // per member
};
TreeShape RootedBtree(int n, int root);
// Returns what a following broadcast must wait for (the root's reductions, or the send up).
PhaseBuilder::Deps TreeReduce(const TreeShape& t, int me, ByteRange r, PhaseBuilder* b);
void TreeBroadcast(const TreeShape& t, int me, ByteRange r, PhaseBuilder* b,
                   PhaseBuilder::Deps after = {});

Status UnsupportedFor(const PhaseSpec& p);

// Puts kCopy steps for `copies` before `steps` (an algorithm's logical steps of one phase),
// shifting their dependencies.
void PrependCopies(const std::vector<LocalCopy>& copies, std::vector<LogicalStep>* steps);

}  // namespace genie::collective::internal
