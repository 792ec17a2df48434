#include "genie/runtime/compact_chunk.h"

#include <gtest/gtest.h>

#include "genie/collective/planner.h"

namespace genie::runtime {
namespace {

collective::CollectiveSpec RingAllReduce(int n, Bytes size) {
  collective::CollectiveSpec spec;
  spec.type = CollectiveType::kAllReduce;
  spec.size = size;
  for (int r = 0; r < n; ++r) spec.group.push_back(r);
  spec.options.chunks = 4;
  return spec;
}

CompactChunk ChunkOf(const collective::CollectiveSpec& spec, int rank, int chunk) {
  auto plan = collective::PlanChunk(spec, rank, chunk);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return Compact(*plan, rank, static_cast<int>(spec.group.size()), nullptr);
}

TEST(ScheduleCache, RotatedRingChunksAreSharedAndForgottenWhenReleased) {
  const auto spec = RingAllReduce(8, 8 * 4 * 64);  // equal blocks: every rank a rotation
  ScheduleCache cache;
  std::vector<std::shared_ptr<const CompactChunk>> held;
  for (int r = 0; r < 8; ++r) held.push_back(cache.Intern(ChunkOf(spec, r, 1)));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  EXPECT_EQ(cache.hits(), 7u);
  for (int r = 1; r < 8; ++r) EXPECT_EQ(held[r].get(), held[0].get());
  // Peers are relative: +1 (send) and 7 = -1 mod 8 (receive) for every rank.
  for (uint32_t i = 0; i < held[0]->size(); ++i) {
    const CompactChunk::Step& s = held[0]->steps[i];
    if (collective::HasSend(s.kind)) {
      EXPECT_EQ(s.send_delta, 1u) << "step " << i;
    }
    if (collective::HasRecv(s.kind)) {
      EXPECT_EQ(s.recv_delta, 7u) << "step " << i;
    }
  }
  for (auto& h : held) cache.Release(h);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ScheduleCache, StateSlotsInterleaveRanksInBlocksOfDoublingWidth) {
  const auto spec = RingAllReduce(8, 8 * 4 * 64);
  ScheduleCache cache;
  std::shared_ptr<const CompactChunk> chunk = cache.Intern(ChunkOf(spec, 0, 0));
  const uint32_t n = chunk->size();
  ASSERT_GT(n, 2u);
  int initial_calls = 0;
  const auto initial = [&](std::vector<uint8_t>& cells) {
    ++initial_calls;
    ASSERT_EQ(cells.size(), n);
    for (uint32_t s = 0; s < n; ++s) cells[s] = static_cast<uint8_t>(s % 7 + 1);
  };
  // 1 + 2 + 4 + 8 + 16 + 32 + 64 + 64 slots: widths double up to 64.
  std::vector<ScheduleCache::StateSlot> slots;
  for (int r = 0; r < 191; ++r) slots.push_back(cache.AcquireStates(chunk.get(), initial));
  EXPECT_EQ(initial_calls, 1);
  const uint32_t widths[] = {1, 2, 4, 8, 16, 32, 64, 64};
  size_t r = 0;
  for (uint32_t w : widths) {
    for (uint32_t i = 0; i < w && r < slots.size(); ++i, ++r) {
      EXPECT_EQ(slots[r].stride, w) << "slot " << r;
      // The slots of a block are neighbours: step s of slot i at cells[s * width + i].
      EXPECT_EQ(slots[r].cells, slots[r - i].cells + i) << "slot " << r;
      EXPECT_EQ(slots[r].block, slots[r - i].block) << "slot " << r;
    }
  }
  // Every slot starts from `initial`, and writes to one slot leave the others alone.
  for (auto& slot : slots) {
    for (uint32_t s = 0; s < n; ++s) ASSERT_EQ(slot.cells[s * slot.stride], s % 7 + 1);
  }
  for (uint32_t s = 0; s < n; ++s) slots[5].cells[s * slots[5].stride] = 0xff;
  for (uint32_t s = 0; s < n; ++s) {
    EXPECT_EQ(slots[4].cells[s * slots[4].stride], s % 7 + 1);
    EXPECT_EQ(slots[6].cells[s * slots[6].stride], s % 7 + 1);
  }
  for (auto& slot : slots) cache.ReleaseStates(chunk.get(), slot);
  // Every block was freed with its last slot: the next rank starts a new pool at width 1.
  const ScheduleCache::StateSlot again = cache.AcquireStates(chunk.get(), initial);
  EXPECT_EQ(initial_calls, 2);
  EXPECT_EQ(again.stride, 1u);
  cache.ReleaseStates(chunk.get(), again);
  cache.Release(chunk);
}

TEST(ScheduleCache, DifferentChunksAreNotShared) {
  const auto spec = RingAllReduce(8, 8 * 4 * 64);
  ScheduleCache cache;
  auto a = cache.Intern(ChunkOf(spec, 0, 0));
  auto b = cache.Intern(ChunkOf(spec, 0, 1));                              // other tags
  auto c = cache.Intern(ChunkOf(RingAllReduce(8, 8 * 4 * 64 + 4), 0, 0));  // other sizes
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(cache.size(), 3u);
  cache.Release(a);
  EXPECT_EQ(cache.size(), 2u);
}

// The property PlanShared rests on (compact_chunk.h): for every spec RotationKey accepts and
// every chunk SharesByRotation accepts, the chunk found by key equals the rank's own plan.
// Covers both algorithms and every collective type it accepts, sizes that split evenly and
// sizes that do not (those must fall back), chunks, channels, slices, roots, the group as the
// whole world, as every other rank of a larger world and starting mid-world.
TEST(PlanShared, RotationKeyedChunksEqualEachRanksOwnPlan) {
  using collective::Algorithm;
  uint64_t shared_cases = 0, compared = 0;
  for (int n : {1, 2, 3, 4, 5, 8}) {
    for (int layout = 0; layout < 3; ++layout) {
      int world = n;
      std::vector<int> group;
      for (int j = 0; j < n; ++j) {
        if (layout == 0) group.push_back(j);
        if (layout == 1) group.push_back(2 * j);              // every other rank of 2n
        if (layout == 2) group.push_back((j + 3) % (n + 2));  // mid-world, wrapping
      }
      if (layout == 1) world = 2 * n;
      if (layout == 2) world = n + 2;
      for (CollectiveType type :
           {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather,
            CollectiveType::kAllToAll, CollectiveType::kBroadcast, CollectiveType::kReduce}) {
        for (Algorithm a : {Algorithm::kRing, Algorithm::kDirect}) {
          for (int chunks : {1, 4}) {
            for (Bytes size : {Bytes{0}, Bytes{4} * n * chunks * 16, Bytes{4} * n * chunks * 16 + 4,
                               Bytes{1000}, Bytes{12345}}) {
              for (int variant = 0; variant < 4; ++variant) {
                collective::CollectiveSpec spec;
                spec.type = type;
                spec.size = size;
                spec.group = group;
                spec.options.algorithms = {a};
                spec.options.chunks = chunks;
                spec.options.channels = variant & 1 ? 2 : 1;
                spec.options.slice_bytes = variant & 2 ? 64 : 0;
                if (variant == 3) spec.options.dims = {n};
                if (variant >= 2)
                  spec.options.optimization = collective::Optimization::kLocalBwAware;
                spec.root = variant % 2 == 0 ? 0 : n - 1;
                ScheduleCache cache;
                std::vector<std::shared_ptr<const CompactChunk>> held;
                for (int k = 0; k < chunks; ++k) {
                  for (int i = 0; i < n; ++i) {
                    auto key = RotationKey(spec, i, world);
                    ASSERT_NE(key, nullptr) << "ring and direct on one dimension are keyed";
                    auto own = collective::PlanChunk(spec, i, k);
                    ASSERT_TRUE(own.ok()) << own.status().message();
                    auto got = PlanShared(spec, i, world, static_cast<uint32_t>(k), key, cache);
                    ASSERT_TRUE(got.ok()) << got.status().message();
                    ASSERT_TRUE(**got == Compact(*own, group[i], world, nullptr))
                        << collective::CollectiveOpName(type) << " " << collective::AlgorithmName(a)
                        << " n=" << n << " layout=" << layout << " size=" << size
                        << " chunks=" << chunks << " variant=" << variant << " chunk " << k
                        << " member " << i;
                    held.push_back(*got);
                    ++compared;
                  }
                }
                if (cache.plans_skipped() > 0) ++shared_cases;
                // Same relative group (not layout 2): every member after the first shares each
                // chunk whose blocks are equal, unless the root's offset tells them apart.
                const bool rooted =
                    type == CollectiveType::kBroadcast || type == CollectiveType::kReduce;
                if (layout != 2 && !rooted) {
                  uint64_t expected = 0;
                  for (int k = 0; k < chunks; ++k) {
                    if (SharesByRotation(spec, k)) expected += static_cast<uint64_t>(n - 1);
                  }
                  EXPECT_EQ(cache.plans_skipped(), expected)
                      << collective::CollectiveOpName(type) << " n=" << n << " size=" << size;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(shared_cases, 1000u);
  EXPECT_GT(compared, 10000u);
}

TEST(PlanShared, UnequalBlocksAndOtherAlgorithmsArePlannedPerRank) {
  // 8 ranks, 4 chunks of 8*64+1 elements: blocks differ by an element, so rank 0's chunk is
  // not a rotation of rank 1's. SharesByRotation must refuse it.
  auto spec = RingAllReduce(8, 4 * (8 * 64 + 1) * 4);
  EXPECT_FALSE(SharesByRotation(spec, 0));
  EXPECT_FALSE(ChunkOf(spec, 0, 0) == ChunkOf(spec, 1, 0));
  ScheduleCache cache;
  for (int r = 0; r < 8; ++r) {
    auto got = PlanShared(spec, r, 8, 0, RotationKey(spec, r, 8), cache);
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(**got == ChunkOf(spec, r, 0)) << "rank " << r;
  }
  EXPECT_EQ(cache.plans_skipped(), 0u);
  // Halving-doubling pairs members by their index bits: not a rotation, never keyed.
  auto hd = RingAllReduce(8, 8 * 4 * 64);
  hd.options.algorithms = {collective::Algorithm::kHalvingDoubling};
  EXPECT_EQ(RotationKey(hd, 0, 8), nullptr);
  EXPECT_FALSE(ChunkOf(hd, 0, 0) == ChunkOf(hd, 1, 0));
}

}  // namespace
}  // namespace genie::runtime
