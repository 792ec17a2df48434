// Halving-doubling as ASTRA-sim's HalvingDoubling.cc orders it: reduce-scatter exchanges half
// of the current range with the partner at distance 1, then a quarter at distance 2, ...;
// all-gather goes the other way (distance N/2 first, one block, then doubling). All-reduce is
// the two back to back (2·log2 N steps).
//
// Any N (ASTRA-sim only handles powers of two): with p = 2^floor(log2 N) and r = N - p, the
// first 2r members pair up (2v, 2v+1); the even one hands its data to the odd one before the
// power-of-two exchange and gets the result back after it (Rabenseifner's folding).
#include "genie/collective/geometry.h"
#include "genie/collective/phase.h"

namespace genie::collective::internal {
namespace {

struct Fold {
  int p = 1, r = 0, bits = 0;
  explicit Fold(int n) : p(FloorPow2(n)), r(n - FloorPow2(n)) {
    while ((1 << bits) < p) ++bits;
  }
  bool Extra(int m) const { return m < 2 * r && m % 2 == 0; }
  int Virtual(int m) const { return m < 2 * r ? m / 2 : m - r; }
  int Member(int v) const { return v < r ? 2 * v + 1 : v + r; }
};

int ReverseBits(int v, int bits) {
  int out = 0;
  for (int i = 0; i < bits; ++i) {
    if (v & (1 << i)) out |= 1 << (bits - 1 - i);
  }
  return out;
}

ByteRange Span(ByteRange a, ByteRange b) { return {a.offset, b.offset + b.length - a.offset}; }

// Byte range of the super-blocks at positions [a, b) (a < b).
struct SuperBlocks {
  std::vector<ByteRange> at;  // per position
  ByteRange Range(int a, int b) const {
    return Span(at[static_cast<size_t>(a)], at[static_cast<size_t>(b - 1)]);
  }
};

SuperBlocks MakeSuperBlocks(const PhaseSpec& p, const Fold& f) {
  SuperBlocks sb;
  for (int pos = 0; pos < f.p; ++pos) {
    const int v = ReverseBits(pos, f.bits);
    if (v < f.r) {
      sb.at.push_back(Span(p.blocks[static_cast<size_t>(2 * v)],
                           p.blocks[static_cast<size_t>(2 * v + 1)]));
    } else {
      sb.at.push_back(p.blocks[static_cast<size_t>(v + f.r)]);
    }
  }
  return sb;
}

// ASTRA-sim (HalvingDoubling.cc with PacketBundle) charges a reduction when it sends a
// message of the halving half other than the first, on that message's own (halved) size, and
// none after the last halving receive (the next message starts the doubling half, or none
// follows). With a power-of-two group genie charges the same: halving step k > 0 pays before
// its send, the halving receives pay nothing.
void ChargeLikeAstraSim(int k, uint32_t send, uint32_t recv, PhaseBuilder* b) {
  if (k > 0) b->SetCharge(send, ReduceCharge::kBeforeSend);
  b->SetCharge(recv, ReduceCharge::kNone);
}

// All-reduce over `region`.
void AllReduce(const PhaseSpec& p, const Fold& f, ByteRange region, PhaseBuilder* b) {
  const bool astra = f.r == 0;  // ASTRA-sim runs powers of two only
  if (f.Extra(p.me)) {
    const uint32_t s = b->Send(p.me + 1, region);
    b->Recv(p.me + 1, region, false, {s});
    return;
  }
  PhaseBuilder::Deps last;
  if (p.me < 2 * f.r) last = {b->Recv(p.me - 1, region, true)};
  const int v = f.Virtual(p.me);
  // Halving: step k talks to v ^ 2^k and keeps the half selected by bit k of v.
  std::vector<ByteRange> kept_stack;
  ByteRange cur = region;
  for (int k = 0; k < f.bits; ++k) {
    const int partner = f.Member(v ^ (1 << k));
    const bool upper = (v >> k) & 1;
    const ByteRange keep = SplitPart(cur, 2, upper ? 1 : 0);
    const ByteRange give = SplitPart(cur, 2, upper ? 0 : 1);
    const uint32_t s = b->Send(partner, give, last);
    const uint32_t r = b->Recv(partner, keep, true, last);
    if (astra) ChargeLikeAstraSim(k, s, r, b);
    last = {s, r};
    kept_stack.push_back(cur);
    cur = keep;
  }
  // Doubling back: step k sends what this member holds, gets the partner's half.
  for (int k = f.bits - 1; k >= 0; --k) {
    const int partner = f.Member(v ^ (1 << k));
    const bool upper = (v >> k) & 1;
    const ByteRange whole = kept_stack[static_cast<size_t>(k)];
    const ByteRange other = SplitPart(whole, 2, upper ? 0 : 1);
    const uint32_t s = b->Send(partner, cur, last);
    last = {s, b->Recv(partner, other, false, last)};
    cur = whole;
  }
  if (p.me < 2 * f.r) b->Send(p.me - 1, region, last);
}

ByteRange WholeRegion(const PhaseSpec& p) {
  return Span(p.blocks[static_cast<size_t>(p.order.front())],
              p.blocks[static_cast<size_t>(p.order.back())]);
}

void ReduceScatter(const PhaseSpec& p, const Fold& f, PhaseBuilder* b) {
  const bool astra = f.r == 0;
  const ByteRange region = WholeRegion(p);
  const ByteRange mine = p.blocks[static_cast<size_t>(p.me)];
  if (f.Extra(p.me)) {
    const uint32_t s = b->Send(p.me + 1, region);
    b->Recv(p.me + 1, mine, false, {s});
    return;
  }
  PhaseBuilder::Deps last;
  if (p.me < 2 * f.r) last = {b->Recv(p.me - 1, region, true)};
  const SuperBlocks sb = MakeSuperBlocks(p, f);
  const int v = f.Virtual(p.me);
  int a = 0, e = f.p;
  for (int k = 0; k < f.bits; ++k) {
    const int partner = f.Member(v ^ (1 << k));
    const int mid = (a + e) / 2;
    const bool upper = (v >> k) & 1;  // = bit (bits-1-k) of this member's position
    const ByteRange lower = sb.Range(a, mid), higher = sb.Range(mid, e);
    const uint32_t s = b->Send(partner, upper ? lower : higher, last);
    const uint32_t r = b->Recv(partner, upper ? higher : lower, true, last);
    if (astra) ChargeLikeAstraSim(k, s, r, b);
    last = {s, r};
    if (upper) a = mid; else e = mid;
  }
  if (p.me < 2 * f.r) b->Send(p.me - 1, p.blocks[static_cast<size_t>(p.me - 1)], last);
}

void AllGather(const PhaseSpec& p, const Fold& f, PhaseBuilder* b) {
  const ByteRange region = WholeRegion(p);
  const ByteRange mine = p.blocks[static_cast<size_t>(p.me)];
  if (f.Extra(p.me)) {
    const uint32_t s = b->Send(p.me + 1, mine);
    b->Recv(p.me + 1, region, false, {s});
    return;
  }
  PhaseBuilder::Deps last;
  if (p.me < 2 * f.r) last = {b->Recv(p.me - 1, p.blocks[static_cast<size_t>(p.me - 1)], false)};
  const SuperBlocks sb = MakeSuperBlocks(p, f);
  const int v = f.Virtual(p.me);
  const int pos = ReverseBits(v, f.bits);
  int a = pos, e = pos + 1;
  // Distance p/2 first: bit k = bits-1 of v is bit 0 of the position, so the partner's range
  // is adjacent to ours and the same size.
  for (int k = f.bits - 1; k >= 0; --k) {
    const int partner = f.Member(v ^ (1 << k));
    const int size = e - a;
    const bool upper = (v >> k) & 1;
    const int pa = upper ? a - size : e;
    const uint32_t s = b->Send(partner, sb.Range(a, e), last);
    last = {s, b->Recv(partner, sb.Range(pa, pa + size), false, last)};
    if (upper) a = pa; else e = pa + size;
  }
  if (p.me < 2 * f.r) b->Send(p.me - 1, region, last);
}

}  // namespace

Status BuildHalvingDoubling(const PhaseSpec& p, PhaseBuilder* b) {
  const int n = p.n();
  if (n == 1) return Status::Ok();
  const Fold f(n);
  switch (p.op) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kBarrier:
      AllReduce(p, f, p.region, b);
      return Status::Ok();
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      ReduceScatter(p, f, b);
      return Status::Ok();
    case CollectiveType::kAllGather:
      AllGather(p, f, b);
      return Status::Ok();
    default:
      return UnsupportedFor(p);
  }
}

}  // namespace genie::collective::internal
