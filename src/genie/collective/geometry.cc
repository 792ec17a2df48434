#include "genie/collective/geometry.h"

#include <numeric>

#include "genie/common/check.h"

namespace genie::collective::internal {

ByteRange SplitPart(ByteRange r, int parts, int i) {
  GENIE_CHECK(parts > 0 && i >= 0 && i < parts) << "parts " << parts << " i " << i;
  const Bytes p = static_cast<Bytes>(parts);
  const Bytes u = static_cast<Bytes>(i);
  // Whole float32 elements when the range holds whole elements, as NCCL splits by count: a
  // reduction over a block that starts mid-element would add halves of two numbers.
  const Bytes unit = r.length % kElementBytes == 0 ? kElementBytes : 1;
  const Bytes units = r.length / unit;
  const Bytes q = units / p;
  const Bytes rem = units % p;
  return {r.offset + (u * q + std::min(u, rem)) * unit, (q + (u < rem ? 1 : 0)) * unit};
}

std::vector<ByteRange> SplitAll(ByteRange r, int parts) {
  std::vector<ByteRange> out;
  out.reserve(static_cast<size_t>(parts));
  for (int i = 0; i < parts; ++i) out.push_back(SplitPart(r, parts, i));
  return out;
}

int FloorPow2(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

namespace {
int BitReverse(int v, int bits) {
  int out = 0;
  for (int b = 0; b < bits; ++b) {
    if (v & (1 << b)) out |= 1 << (bits - 1 - b);
  }
  return out;
}
}  // namespace

std::vector<int> HdOrder(int n) {
  const int p = FloorPow2(n);
  const int r = n - p;
  int bits = 0;
  while ((1 << bits) < p) ++bits;
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  for (int pos = 0; pos < p; ++pos) {
    const int v = BitReverse(pos, bits);
    if (v < r) {
      order.push_back(2 * v);
      order.push_back(2 * v + 1);
    } else {
      order.push_back(v + r);
    }
  }
  return order;
}

std::vector<ByteRange> PlaceBlocks(Bytes base, const std::vector<Bytes>& sizes,
                                   const std::vector<int>& order) {
  std::vector<ByteRange> out(sizes.size());
  Bytes at = base;
  for (int m : order) {
    out[static_cast<size_t>(m)] = {at, sizes[static_cast<size_t>(m)]};
    at += sizes[static_cast<size_t>(m)];
  }
  return out;
}

std::vector<int> BlockOrder(Algorithm algorithm, int n) {
  if (algorithm == Algorithm::kHalvingDoubling) return HdOrder(n);
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  return order;
}

namespace {
Algorithm FirstAlgorithm(const CollectiveSpec& spec) {
  const Algorithm a =
      spec.options.algorithms.empty() ? Algorithm::kRing : spec.options.algorithms[0];
  return EffectiveAlgorithm(spec.type, a);
}
}  // namespace

Bytes BufferBytes(const CollectiveSpec& spec, int group_index) {
  const Bytes n = spec.group.size();
  switch (spec.type) {
    case CollectiveType::kAllGather:
    case CollectiveType::kGather:
      return n * spec.size;
    case CollectiveType::kBarrier:
      return 0;
    case CollectiveType::kAllToAll: {
      Bytes out = spec.size;
      const int chunks = std::max(1, spec.options.chunks);
      for (int k = 0; k < chunks; ++k) {
        const ByteRange chunk = SplitPart({0, spec.size}, chunks, k);
        out += n * SplitPart({0, chunk.length}, static_cast<int>(n), group_index).length;
      }
      return out;
    }
    default:
      return spec.size;
  }
}

ChunkGeometry Geometry(const CollectiveSpec& spec, int group_index, int chunk) {
  const int n = static_cast<int>(spec.group.size());
  const int chunks = std::max(1, spec.options.chunks);
  const ByteRange c = SplitPart({0, spec.size}, chunks, chunk);
  ChunkGeometry g;
  g.region = c;
  const std::vector<int> order = BlockOrder(FirstAlgorithm(spec), n);
  switch (spec.type) {
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kScatter: {
      std::vector<Bytes> sizes;
      for (int j = 0; j < n; ++j) sizes.push_back(SplitPart({0, c.length}, n, j).length);
      g.blocks = PlaceBlocks(c.offset, sizes, order);
      break;
    }
    case CollectiveType::kAllGather:
    case CollectiveType::kGather: {
      const Bytes nn = static_cast<Bytes>(n);
      g.region = {nn * c.offset, nn * c.length};
      g.blocks = PlaceBlocks(g.region.offset, std::vector<Bytes>(static_cast<size_t>(n), c.length),
                             order);
      break;
    }
    case CollectiveType::kAllToAll: {
      g.blocks = SplitAll(c, n);
      // Output slots follow the whole input, chunk after chunk; slot j holds member j's block
      // for this rank, whose size is this rank's share of the chunk.
      Bytes base = spec.size;
      for (int k = 0; k < chunk; ++k) {
        const ByteRange prev = SplitPart({0, spec.size}, chunks, k);
        base += static_cast<Bytes>(n) * SplitPart({0, prev.length}, n, group_index).length;
      }
      const Bytes mine = SplitPart({0, c.length}, n, group_index).length;
      for (int j = 0; j < n; ++j) g.recv_blocks.push_back({base + static_cast<Bytes>(j) * mine, mine});
      break;
    }
    default:
      break;
  }
  return g;
}

}  // namespace genie::collective::internal
