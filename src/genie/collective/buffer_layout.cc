#include "genie/collective/buffer_layout.h"

#include <algorithm>

#include "genie/collective/geometry.h"
#include "genie/collective/hierarchy.h"

namespace genie::collective {
namespace {

using internal::ChunkGeometry;
using internal::Geometry;

std::vector<Source> All(const CollectiveSpec& spec, Bytes offset) {
  std::vector<Source> out;
  for (int r : spec.group) out.push_back({r, offset});
  std::sort(out.begin(), out.end());
  return out;
}

Region Own(int rank, ByteRange r) { return {r, {{rank, r.offset}}}; }

}  // namespace

BufferLayout Layout(const CollectiveSpec& asked, int asked_index) {
  BufferLayout out;
  if (asked_index < 0 || asked_index >= static_cast<int>(asked.group.size())) return out;
  // Involved dimensions narrow the group; everything below speaks of the effective one.
  auto eff = internal::MakeEffective(asked, asked_index);
  if (!eff.ok()) return out;
  const internal::Effective& e = *eff;
  const CollectiveSpec& spec = e.spec;
  const int group_index = e.index;
  const int n = static_cast<int>(spec.group.size());
  const int me = spec.group[static_cast<size_t>(group_index)];
  const int root = spec.group[static_cast<size_t>(std::clamp(spec.root, 0, n - 1))];
  const bool is_root = group_index == spec.root;
  out.buffer_bytes = internal::EffectiveBufferBytes(e);
  const ByteRange whole{0, spec.size};
  const int chunks = std::max(1, spec.options.chunks);
  switch (spec.type) {
    case CollectiveType::kAllReduce:
      out.initial.push_back(Own(me, whole));
      out.final.push_back({whole, All(spec, 0)});
      break;
    case CollectiveType::kReduce:
      out.initial.push_back(Own(me, whole));
      if (is_root) out.final.push_back({whole, All(spec, 0)});
      break;
    case CollectiveType::kBroadcast:
      if (is_root) out.initial.push_back(Own(me, whole));
      out.final.push_back({whole, {{root, 0}}});
      break;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
      out.initial.push_back(Own(me, whole));
      for (int k = 0; k < chunks; ++k) {
        const ByteRange b = internal::NestedBlock(e, group_index, k);
        out.final.push_back({b, All(spec, b.offset)});
      }
      break;
    case CollectiveType::kScatter:
      if (is_root) out.initial.push_back(Own(me, whole));
      for (int k = 0; k < chunks; ++k) {
        const ByteRange b = Geometry(spec, group_index, k).blocks[static_cast<size_t>(group_index)];
        out.final.push_back({b, {{root, b.offset}}});
      }
      break;
    case CollectiveType::kAllGather:
      for (int k = 0; k < chunks; ++k) {
        out.initial.push_back(Own(me, internal::NestedBlock(e, group_index, k)));
        for (int j = 0; j < n; ++j) {
          const ByteRange b = internal::NestedBlock(e, j, k);
          out.final.push_back({b, {{spec.group[static_cast<size_t>(j)], b.offset}}});
        }
      }
      break;
    case CollectiveType::kGather:
      for (int k = 0; k < chunks; ++k) {
        const ChunkGeometry g = Geometry(spec, group_index, k);
        out.initial.push_back(Own(me, g.blocks[static_cast<size_t>(group_index)]));
        if (!is_root) continue;
        for (int j = 0; j < n; ++j) {
          const ByteRange b = g.blocks[static_cast<size_t>(j)];
          out.final.push_back({b, {{spec.group[static_cast<size_t>(j)], b.offset}}});
        }
      }
      break;
    case CollectiveType::kAllToAll: {
      out.initial.push_back(Own(me, whole));
      if (internal::Hierarchical(e)) {
        // On several dimensions: every source's block (this rank's own too) in source order.
        for (int k = 0; k < chunks; ++k) {
          for (const internal::AllToAllSlot& s : internal::AllToAllOutput(e, k)) {
            out.final.push_back(
                {s.range, {{spec.group[static_cast<size_t>(s.source)], s.source_offset}}});
          }
        }
        break;
      }
      for (int k = 0; k < chunks; ++k) {
        const ChunkGeometry g = Geometry(spec, group_index, k);
        for (int j = 0; j < n; ++j) {
          if (j == group_index) {
            out.final.push_back(Own(me, g.blocks[static_cast<size_t>(j)]));
            continue;
          }
          // Member j's block destined to me sits at the same offset in j's input.
          const ByteRange src = g.blocks[static_cast<size_t>(group_index)];
          out.final.push_back({g.recv_blocks[static_cast<size_t>(j)],
                               {{spec.group[static_cast<size_t>(j)], src.offset}}});
        }
      }
      break;
    }
    case CollectiveType::kBarrier:
      break;
  }
  std::sort(out.final.begin(), out.final.end(),
            [](const Region& a, const Region& b) { return a.range.offset < b.range.offset; });
  return out;
}

float InitialElement(int rank, Bytes byte_offset) {
  return static_cast<float>((static_cast<Bytes>(rank) * 7 + byte_offset / 4) % kElementPeriod + 1);
}

float ExpectedElement(const Region& region, Bytes byte_offset) {
  const Bytes d = byte_offset - region.range.offset;
  float sum = 0;
  for (const Source& s : region.sources) sum += InitialElement(s.rank, s.offset + d);
  return sum;
}

std::array<float, kElementPeriod> ExpectedPattern(const Region& region) {
  std::array<float, kElementPeriod> pattern{};
  for (int k = 0; k < kElementPeriod; ++k) {
    pattern[static_cast<size_t>(k)] =
        ExpectedElement(region, region.range.offset + 4 * static_cast<Bytes>(k));
  }
  return pattern;
}

}  // namespace genie::collective
