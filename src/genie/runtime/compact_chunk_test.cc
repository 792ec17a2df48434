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

}  // namespace
}  // namespace genie::runtime
