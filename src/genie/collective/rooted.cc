// Tree algorithms on NCCL's btree (ncclGetBtree), rotated so the collective's root is the tree
// root: broadcast flows down, reduce flows up, all-reduce (ASTRA-sim's single-tree shape) goes
// up then down. Slices pipeline every level.
#include "genie/collective/phase.h"

namespace genie::collective::internal {

Status BuildTree(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  switch (p.op) {
    case CollectiveType::kBroadcast:
      TreeBroadcast(RootedBtree(n, p.root), p.me, p.region, b);
      return Status::Ok();
    case CollectiveType::kReduce:
      TreeReduce(RootedBtree(n, p.root), p.me, p.region, b);
      return Status::Ok();
    case CollectiveType::kAllReduce:
    case CollectiveType::kBarrier: {
      const TreeShape t = RootedBtree(n, 0);
      TreeBroadcast(t, p.me, p.region, b, TreeReduce(t, p.me, p.region, b));
      return Status::Ok();
    }
    default:
      return UnsupportedFor(p);
  }
}

}  // namespace genie::collective::internal
