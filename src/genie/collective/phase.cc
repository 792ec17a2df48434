#include "genie/collective/phase.h"

#include <string>

namespace genie::collective::internal {

uint32_t PhaseBuilder::Add(LogicalStep s) {
  steps_.push_back(std::move(s));
  return static_cast<uint32_t>(steps_.size() - 1);
}

uint32_t PhaseBuilder::Send(int to, ByteRange r, Deps deps) {
  LogicalStep s;
  s.kind = StepKind::kSend;
  s.send_to = to;
  s.send = r;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

uint32_t PhaseBuilder::Recv(int from, ByteRange r, bool reduce, Deps deps) {
  LogicalStep s;
  s.kind = reduce ? StepKind::kRecvReduce : StepKind::kRecv;
  s.recv_from = from;
  s.recv = r;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

uint32_t PhaseBuilder::RecvSend(int from, int to, ByteRange r, bool reduce, Deps deps) {
  LogicalStep s;
  s.kind = reduce ? StepKind::kRecvReduceSend : StepKind::kRecvCopySend;
  s.recv_from = from;
  s.send_to = to;
  s.recv = r;
  s.send = r;
  s.deps = std::move(deps);
  return Add(std::move(s));
}

Status UnsupportedFor(const PhaseSpec& p) {
  return Status::Unsupported(std::string("algorithm '") + AlgorithmName(p.algorithm) +
                             "' does not implement " + CollectiveOpName(p.op) +
                             "; see docs/algorithms.md for the supported pairs");
}

// NCCL's btree (ncclGetBtree): the parent of v clears v's lowest set bit and sets the next one
// up, unless that lands outside [0, n), in which case it only clears the lowest bit.
// (n = 15; each node's children sit below it):
//        0---------------8
//               ______/ \______
//              4               12
//            /   \            /  \ .
//          2       6       10     14
//         / \     / \     /  \ .
//        1   3   5   7   9   11   13
int BtreeParent(int n, int v) {
  if (v == 0) return -1;
  const int bit = v & -v;
  int up = (v ^ bit) | (bit << 1);
  if (up >= n) up = v ^ bit;
  return up;
}

std::vector<int> BtreeChildren(int n, int v) {
  // Children of v are v +- lowbit/2^k for the largest k that stays in range; derive them from
  // the parent rule so both directions agree by construction.
  std::vector<int> out;
  int bit = (v == 0) ? 1 : (v & -v);
  if (v == 0) {
    while (bit < n) bit <<= 1;
  }
  for (int low = bit >> 1; low > 0; low >>= 1) {
    if (v - low >= 0 && v != 0 && BtreeParent(n, v - low) == v) out.push_back(v - low);
    if (v + low < n && BtreeParent(n, v + low) == v) out.push_back(v + low);
  }
  return out;
}

TreeShape RootedBtree(int n, int root) {
  // Member m sits at tree position (m - root) mod n, so the tree is rooted at `root`.
  TreeShape t;
  t.parent.assign(static_cast<size_t>(n), -1);
  t.children.assign(static_cast<size_t>(n), {});
  for (int m = 0; m < n; ++m) {
    const int v = ((m - root) % n + n) % n;
    const int pv = BtreeParent(n, v);
    if (pv >= 0) {
      const int pm = (pv + root) % n;
      t.parent[static_cast<size_t>(m)] = pm;
      t.children[static_cast<size_t>(pm)].push_back(m);
    }
  }
  return t;
}

PhaseBuilder::Deps TreeReduce(const TreeShape& t, int me, ByteRange r, PhaseBuilder* b) {
  PhaseBuilder::Deps got;
  for (int c : t.children[static_cast<size_t>(me)]) got.push_back(b->Recv(c, r, true));
  const int parent = t.parent[static_cast<size_t>(me)];
  if (parent >= 0) return {b->Send(parent, r, got)};
  return got;
}

void TreeBroadcast(const TreeShape& t, int me, ByteRange r, PhaseBuilder* b,
                   PhaseBuilder::Deps after) {
  const int parent = t.parent[static_cast<size_t>(me)];
  PhaseBuilder::Deps have = std::move(after);
  if (parent >= 0) have = {b->Recv(parent, r, false, have)};
  for (int c : t.children[static_cast<size_t>(me)]) b->Send(c, r, have);
}

}  // namespace genie::collective::internal
