// Double binary tree all-reduce, in two shapes:
//
// doubleBinaryTree — ASTRA-sim's (DoubleBinaryTreeTopology.cc, BinaryTree.cc,
// DoubleBinaryTreeAllReduce.cc), for a power-of-two group. Two trees over the members, each
// numbered in order (left subtree, node, right subtree): "max" is a full tree of N−1 members
// (0..N−2) under member N−1, the root, whose one child is the full tree's root N/2−1; "min"
// is member 0 as the root over a full tree of members 1..N−1 (root N/2). A rank's streams
// (chunks) take the trees in turn, max first, counted across its all-reduces
// (PhaseSpec::stream). Each chunk's whole data goes up its tree and back down:
//   leaf:          send to the parent; receive from the parent; done endpoint-delay later.
//   inner node:    receive both children (reducing), send up after the later one, an
//                  endpoint-delay and one reduction of the chunk; receive from the parent; an
//                  endpoint-delay and a reduction later send to the left then the right child
//                  and finish at once, without waiting for delivery.
//   root:          receive the child (reducing); an endpoint-delay and a reduction later send
//                  back down and finish at once.
// The reductions are charged on the sends (ReduceCharge::kBeforeSend); finishing at once is
// kBeforeSendDetached (schedule.h). So the root finishes first and the leaves last.
//
// ncclDoubleBinaryTree, and doubleBinaryTree on other group sizes (ASTRA-sim builds its trees
// for powers of two only) — NCCL's (ncclGetDtree): tree 0 is the btree rooted at member 0;
// tree 1 is the same tree mirrored (member n-1-m) when n is even, or shifted by one (member
// m+1) when n is odd, so that a rank that is a leaf in one tree is an inner node in the other.
// Each tree carries half of the data: reduce up to its root, broadcast back down. Slices
// pipeline it: slice s of a level waits only for slice s of the level below.
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

Status BuildNcclDoubleTree(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  const TreeShape trees[2] = {RootedBtree(n, 0), Mapped(n, n % 2 == 0)};
  for (int t = 0; t < 2; ++t) {
    const ByteRange half = SplitPart(p.region, 2, t);
    const PhaseBuilder::Deps up = TreeReduce(trees[t], p.me, half, b);
    TreeBroadcast(trees[t], p.me, half, b, up);
  }
  return Status::Ok();
}

bool PowerOfTwo(int n) { return n >= 2 && (n & (n - 1)) == 0; }

// One member's place in an ASTRA-sim tree: parent, left and right child (-1 when absent).
struct Place {
  int parent = -1, left = -1, right = -1;
};

// The full tree numbered in order over members [lo, lo + size), size = 2^h − 1: its root is
// the middle member, each half is a subtree. Finds `me` in it; `up` is the subtree's parent.
bool FindInFull(int lo, int size, int up, int me, Place* out) {
  if (size <= 0) return false;
  const int root = lo + size / 2;
  const int half = size / 2;
  if (me == root) {
    out->parent = up;
    out->left = half > 0 ? lo + half / 2 : -1;
    out->right = half > 0 ? root + 1 + half / 2 : -1;
    return true;
  }
  return me < root ? FindInFull(lo, half, root, me, out)
                   : FindInFull(root + 1, half, root, me, out);
}

// Tree 0 ("max"): members 0..n−2 in a full tree under member n−1; tree 1 ("min"): member 0
// over a full tree of members 1..n−1.
Place AstraPlace(int n, int tree, int me) {
  Place pl;
  if (tree == 0) {
    if (me == n - 1) {
      pl.left = (n - 1) / 2;
      return pl;
    }
    FindInFull(0, n - 1, n - 1, me, &pl);
  } else {
    if (me == 0) {
      pl.right = 1 + (n - 1) / 2;
      return pl;
    }
    FindInFull(1, n - 1, 0, me, &pl);
  }
  return pl;
}

Status BuildAstraSimDoubleTree(const PhaseSpec& p, PhaseBuilder* b) {
  const Place pl = AstraPlace(p.n(), static_cast<int>(p.stream % 2), p.me);
  const ByteRange r = p.region;
  const bool leaf = pl.left < 0 && pl.right < 0;
  if (leaf) {
    const uint32_t up = b->Send(pl.parent, r);
    b->Recv(pl.parent, r, false, {up});
    return Status::Ok();
  }
  // The reductions of the children's data are charged once, on the send that follows them.
  PhaseBuilder::Deps got;
  for (int c : {pl.left, pl.right}) {
    if (c < 0) continue;
    got.push_back(b->Recv(c, r, true));
    b->SetCharge(got.back(), ReduceCharge::kNone);
  }
  PhaseBuilder::Deps down = got;
  if (pl.parent >= 0) {
    const uint32_t up = b->Send(pl.parent, r, got);
    b->SetCharge(up, ReduceCharge::kBeforeSend);
    down = {b->Recv(pl.parent, r, false, {up})};
  }
  for (int c : {pl.left, pl.right}) {
    if (c < 0) continue;
    b->SetCharge(b->Send(c, r, down), ReduceCharge::kBeforeSendDetached);
  }
  return Status::Ok();
}

}  // namespace

Status BuildDoubleBinaryTree(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  if (p.op != CollectiveType::kAllReduce && p.op != CollectiveType::kBarrier) {
    return UnsupportedFor(p);
  }
  if (p.algorithm == Algorithm::kDoubleBinaryTree && PowerOfTwo(n)) {
    return BuildAstraSimDoubleTree(p, b);
  }
  return BuildNcclDoubleTree(p, b);
}

}  // namespace genie::collective::internal
