// Double binary tree all-reduce as NCCL builds it (ncclGetDtree): tree 0 is the btree rooted at
// member 0; tree 1 is the same tree mirrored (member n-1-m) when n is even, or shifted by one
// (member m+1) when n is odd, so that a rank that is a leaf in one tree is an inner node in the
// other. Each tree carries half of the data: reduce up to its root, broadcast back down.
// Slices pipeline it: slice s of a level waits only for slice s of the level below.
#include "genie/collective/geometry.h"
#include "genie/collective/phase.h"

namespace genie::collective::internal {
namespace {

TreeShape Mapped(int n, bool mirror) {
  TreeShape t;
  t.parent.assign(static_cast<size_t>(n), -1);
  t.children.assign(static_cast<size_t>(n), {});
  // Tree position of member m, and its inverse.
  auto pos = [&](int m) { return mirror ? n - 1 - m : (m - 1 + n) % n; };
  auto member = [&](int v) { return mirror ? n - 1 - v : (v + 1) % n; };
  for (int m = 0; m < n; ++m) {
    const int pv = BtreeParent(n, pos(m));
    if (pv >= 0) {
      t.parent[static_cast<size_t>(m)] = member(pv);
      t.children[static_cast<size_t>(member(pv))].push_back(m);
    }
  }
  return t;
}

}  // namespace

Status BuildDoubleBinaryTree(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  if (p.op != CollectiveType::kAllReduce && p.op != CollectiveType::kBarrier) {
    return UnsupportedFor(p);
  }
  const TreeShape trees[2] = {RootedBtree(n, 0), Mapped(n, n % 2 == 0)};
  for (int t = 0; t < 2; ++t) {
    const ByteRange half = SplitPart(p.region, 2, t);
    const PhaseBuilder::Deps up = TreeReduce(trees[t], p.me, half, b);
    TreeBroadcast(trees[t], p.me, half, b, up);
  }
  return Status::Ok();
}

}  // namespace genie::collective::internal
