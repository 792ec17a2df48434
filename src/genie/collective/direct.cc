// Direct algorithms as ASTRA-sim's AllToAll.cc shapes them: this rank talks to every other
// member at once (directK: at most K messages in flight, the (i+K)-th sent once the i-th
// message has arrived). Peers are visited in ring order me+1, me+2, ... and heard from in
// the order me-1, me-2, ...
#include "genie/collective/geometry.h"
#include "genie/collective/phase.h"

namespace genie::collective::internal {
namespace {

int Window(const PhaseSpec& p) {
  const int others = p.n() - 1;
  return p.direct_window <= 0 ? others : std::min(p.direct_window, others);
}

// Sends msg(i) to member me+1+i and receives from member me-1-i, with the window rule.
// `send_deps` apply to every send, `recv_deps(i)` to receive i. Returns the receive steps.
template <typename SendRange, typename RecvRange, typename RecvDeps>
std::vector<uint32_t> Exchange(const PhaseSpec& p, SendRange send_range, RecvRange recv_range,
                               bool reduce, const PhaseBuilder::Deps& send_deps,
                               RecvDeps recv_deps, PhaseBuilder* b,
                               std::vector<uint32_t>* sends = nullptr) {
  const int others = p.n() - 1;
  const int k = Window(p);
  std::vector<uint32_t> recvs;
  // Interleave so that receive i exists before send i+k needs it.
  std::vector<uint32_t> sent;
  for (int i = 0; i < others; ++i) {
    PhaseBuilder::Deps d = send_deps;
    if (i >= k) d.push_back(recvs[static_cast<size_t>(i - k)]);
    const int to = p.Peer(1 + i);
    sent.push_back(b->Send(to, send_range(to), d));
    const int from = p.Peer(-1 - i);
    recvs.push_back(b->Recv(from, recv_range(from), reduce, recv_deps(i)));
  }
  if (sends != nullptr) *sends = sent;
  return recvs;
}

PhaseBuilder::Deps None(int) { return {}; }

}  // namespace

Status BuildDirect(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  switch (p.op) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kBarrier: {
      // Reduce-scatter straight to each block's owner, then all-gather from every owner.
      const std::vector<ByteRange> blocks = SplitAll(p.region, n);
      auto blk = [&](int m) { return blocks[static_cast<size_t>(m)]; };
      auto mine = [&](int) { return blocks[static_cast<size_t>(p.me)]; };
      std::vector<uint32_t> rs_sends;
      const std::vector<uint32_t> reduced = Exchange(p, blk, mine, true, {}, None, b, &rs_sends);
      // Receive i of the all-gather overwrites the block send i of the reduce-scatter read.
      auto after_send = [&](int i) {
        return PhaseBuilder::Deps{rs_sends[static_cast<size_t>(i)]};
      };
      // Member me-1-i's block arrives in receive i; its block was sent to it in send
      // (n-2-i) (peer me+1+j == me-1-i  <=>  j = n-2-i).
      auto ag_recv_deps = [&](int i) { return after_send(n - 2 - i); };
      // The all-gather sends read the reduced block, so the planner's byte hazards already
      // make them wait for every reduction; spell the wait out only when there are no bytes
      // (barrier, tiny buffers), which keeps a 1,024-rank plan from carrying every dependency
      // twice.
      const PhaseBuilder::Deps wait =
          blocks[static_cast<size_t>(p.me)].length == 0 ? reduced : PhaseBuilder::Deps{};
      Exchange(p, mine, blk, false, wait, ag_recv_deps, b);
      return Status::Ok();
    }
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock: {
      auto blk = [&](int m) { return p.blocks[static_cast<size_t>(m)]; };
      auto mine = [&](int) { return p.blocks[static_cast<size_t>(p.me)]; };
      Exchange(p, blk, mine, true, {}, None, b);
      return Status::Ok();
    }
    case CollectiveType::kAllGather: {
      auto blk = [&](int m) { return p.blocks[static_cast<size_t>(m)]; };
      auto mine = [&](int) { return p.blocks[static_cast<size_t>(p.me)]; };
      Exchange(p, mine, blk, false, {}, None, b);
      return Status::Ok();
    }
    case CollectiveType::kAllToAll: {
      auto out = [&](int m) { return p.blocks[static_cast<size_t>(m)]; };
      auto in = [&](int m) { return p.recv_blocks[static_cast<size_t>(m)]; };
      Exchange(p, out, in, false, {}, None, b);
      return Status::Ok();
    }
    case CollectiveType::kBroadcast:
    case CollectiveType::kScatter: {
      const bool scatter = p.op == CollectiveType::kScatter;
      auto range = [&](int m) { return scatter ? p.blocks[static_cast<size_t>(m)] : p.region; };
      if (p.me == p.root) {
        const int k = Window(p);
        std::vector<uint32_t> sent;
        for (int i = 0; i < n - 1; ++i) {
          PhaseBuilder::Deps d;
          if (i >= k) d.push_back(sent[static_cast<size_t>(i - k)]);
          const int to = p.Peer(1 + i);
          sent.push_back(b->Send(to, range(to), d));
        }
      } else {
        b->Recv(p.root, range(p.me), false);
      }
      return Status::Ok();
    }
    case CollectiveType::kReduce:
    case CollectiveType::kGather: {
      const bool gather = p.op == CollectiveType::kGather;
      auto range = [&](int m) { return gather ? p.blocks[static_cast<size_t>(m)] : p.region; };
      if (p.me == p.root) {
        for (int i = 0; i < n - 1; ++i) {
          const int from = p.Peer(-1 - i);
          b->Recv(from, range(from), !gather);
        }
      } else {
        b->Send(p.root, range(p.me));
      }
      return Status::Ok();
    }
    default:
      return UnsupportedFor(p);
  }
}

// Pairwise exchange all-to-all (MPI's / NCCL's p2p loop): in round t this rank sends to me+t
// and receives from me-t; round t starts when round t-1 is complete.
Status BuildPairwise(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  if (p.op != CollectiveType::kAllToAll) return UnsupportedFor(p);
  PhaseBuilder::Deps prev;
  for (int t = 1; t < n; ++t) {
    const int to = p.Peer(t), from = p.Peer(-t);
    const uint32_t s = b->Send(to, p.blocks[static_cast<size_t>(to)], prev);
    const uint32_t r = b->Recv(from, p.recv_blocks[static_cast<size_t>(from)], false, prev);
    prev = {s, r};
  }
  return Status::Ok();
}

}  // namespace genie::collective::internal
