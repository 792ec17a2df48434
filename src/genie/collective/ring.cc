// Ring algorithms as ASTRA-sim's Ring.cc shapes them: every message goes to the next member
// (me + 1) and comes from the previous one; a message is sent once the previous one has
// arrived, so a chunk's critical path is the chain of steps below.
#include "genie/collective/geometry.h"

#include "genie/collective/phase.h"

namespace genie::collective::internal {
namespace {

// Reduce-scatter around the ring: after n-1 steps member me holds block `owned` fully reduced.
// Returns the step that completes it. `forward` turns the last step into a RecvReduceSend so an
// all-gather can start from it without an extra hop (as ring all-reduce does).
uint32_t RingReduceScatter(const PhaseSpec& p, const std::vector<ByteRange>& blocks, int shift,
                           bool forward, PhaseBuilder* b) {
  const int n = p.n();
  const int next = p.Peer(1), prev = p.Peer(-1);
  // Step t sends block (me + shift - t); the block received at step t is (me + shift - t - 1).
  auto block = [&](int t) { return blocks[static_cast<size_t>(p.Peer(shift - t))]; };
  uint32_t last = b->Send(next, block(0));
  for (int t = 1; t < n - 1; ++t) last = b->RecvSend(prev, next, block(t), true, {last});
  if (forward) return b->RecvSend(prev, next, block(n - 1), true, {last});
  return b->Recv(prev, block(n - 1), true, {last});
}

// All-gather around the ring of blocks member j holds block (j + shift); `first` is the step
// after which this member's own block is ready (and, when `sent`, already sent to next).
void RingAllGather(const PhaseSpec& p, const std::vector<ByteRange>& blocks, int shift,
                   bool sent, uint32_t first, bool have_first, PhaseBuilder* b) {
  const int n = p.n();
  const int next = p.Peer(1), prev = p.Peer(-1);
  uint32_t last = first;
  PhaseBuilder::Deps deps;
  if (have_first) deps = {first};
  if (!sent) {
    last = b->Send(next, blocks[static_cast<size_t>(p.Peer(shift))], deps);
    deps = {last};
  }
  // Step u receives block (me + shift - u) from prev and forwards it, but for the last one.
  for (int u = 1; u < n; ++u) {
    const ByteRange r = blocks[static_cast<size_t>(p.Peer(shift - u))];
    if (u < n - 1) {
      last = b->RecvSend(prev, next, r, false, deps);
    } else {
      last = b->Recv(prev, r, false, deps);
    }
    deps = {last};
  }
}

// ASTRA-sim's ring all-to-all: n(n-1)/2 messages of one block each, all to the next member,
// message m sent once message m-1 from the previous member has arrived. Round t (1..n-1)
// forwards the n-t blocks of origin me-(t-1) that still have to travel; a block in transit waits
// in this rank's own input slot for the same destination (sent in round 1), so the buffer needs
// no scratch space.
void RingAllToAll(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  const int next = p.Peer(1), prev = p.Peer(-1);
  struct Msg { int slot; bool final; };
  std::vector<int> send_slots;   // message m: slot (destination) it reads
  std::vector<Msg> recv_slots;   // message m: where it lands
  for (int t = 1; t < n; ++t) {
    const int origin = p.Peer(-(t - 1));
    const int rorigin = p.Peer(-t);
    for (int dist = t; dist < n; ++dist) {
      send_slots.push_back((origin + dist) % n);
      const int dest = (rorigin + dist) % n;
      recv_slots.push_back(dest == p.me ? Msg{rorigin, true} : Msg{dest, false});
    }
  }
  std::vector<int64_t> last_reader(static_cast<size_t>(n), -1);
  const size_t count = send_slots.size();
  int64_t prev_recv = -1;
  for (size_t m = 0; m < count; ++m) {
    PhaseBuilder::Deps deps;
    if (prev_recv >= 0) deps.push_back(static_cast<uint32_t>(prev_recv));
    const int slot = send_slots[m];
    last_reader[static_cast<size_t>(slot)] = b->Send(next, p.blocks[static_cast<size_t>(slot)], deps);
    const Msg in = recv_slots[m];
    ByteRange into;
    if (in.final) {
      into = p.recv_blocks[static_cast<size_t>(in.slot)];
    } else {
      into = p.blocks[static_cast<size_t>(in.slot)];
      const int64_t lr = last_reader[static_cast<size_t>(in.slot)];
      if (lr >= 0) deps.push_back(static_cast<uint32_t>(lr));
    }
    prev_recv = b->Recv(prev, into, false, deps);
  }
}

}  // namespace

Status BuildRing(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  switch (p.op) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kBarrier: {
      const std::vector<ByteRange> blocks = SplitAll(p.region, n);
      // Reduce-scatter leaves block me+1 at me (shift 0: step t sends block me - t), then the
      // all-gather circulates those blocks: member j owns block j + 1.
      const uint32_t done = RingReduceScatter(p, blocks, 0, true, b);
      RingAllGather(p, blocks, 1, true, done, true, b);
      return Status::Ok();
    }
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      RingReduceScatter(p, p.blocks, -1, false, b);
      return Status::Ok();
    case CollectiveType::kAllGather:
      RingAllGather(p, p.blocks, 0, false, 0, false, b);
      return Status::Ok();
    case CollectiveType::kAllToAll:
      RingAllToAll(p, b);
      return Status::Ok();
    case CollectiveType::kBroadcast: {
      // A chain from the root around the ring (NCCL's ring broadcast), pipelined by slices.
      const int pos = ((p.me - p.root) % n + n) % n;
      if (pos == 0) {
        b->Send(p.Peer(1), p.region);
      } else if (pos < n - 1) {
        b->RecvSend(p.Peer(-1), p.Peer(1), p.region, false);
      } else {
        b->Recv(p.Peer(-1), p.region, false);
      }
      return Status::Ok();
    }
    case CollectiveType::kReduce: {
      // A chain that starts after the root and ends at it (NCCL's ring reduce).
      const int pos = ((p.me - p.root) % n + n) % n;
      if (pos == 1) {
        b->Send(p.Peer(1), p.region);
      } else if (pos == 0) {
        b->Recv(p.Peer(-1), p.region, true);
      } else {
        b->RecvSend(p.Peer(-1), p.Peer(1), p.region, true);
      }
      return Status::Ok();
    }
    default:
      return UnsupportedFor(p);
  }
}

}  // namespace genie::collective::internal
