#include "genie/runtime/plan_memo.h"

#include <gtest/gtest.h>

#include <functional>

#include "genie/collective/planner.h"

namespace genie::runtime {
namespace {

collective::CollectiveSpec RingAllReduce(int n, Bytes size, int chunks) {
  collective::CollectiveSpec spec;
  spec.type = CollectiveType::kAllReduce;
  spec.size = size;
  for (int r = 0; r < n; ++r) spec.group.push_back(r);
  spec.options.chunks = chunks;
  return spec;
}

// Every input the planner reads tells two keys apart; only tree_stream's parity counts.
TEST(PlanMemo, KeySeesEveryPlannerInput) {
  using collective::CollectiveSpec;
  const CollectiveSpec base = RingAllReduce(8, 1 << 20, 2);
  const PlanKey k0 = MemoKey(base, 3);
  auto custom = std::make_shared<const spec::CustomAlgorithm>();
  const std::vector<std::pair<const char*, std::function<void(CollectiveSpec&)>>> changes = {
      {"type", [](CollectiveSpec& s) { s.type = CollectiveType::kAllGather; }},
      {"size", [](CollectiveSpec& s) { s.size += 8; }},
      {"root", [](CollectiveSpec& s) { s.root = 2; }},
      {"collective_id", [](CollectiveSpec& s) { s.collective_id = 1; }},
      {"group", [](CollectiveSpec& s) { std::swap(s.group[0], s.group[1]); }},
      {"algorithms",
       [](CollectiveSpec& s) { s.options.algorithms = {collective::Algorithm::kDirect}; }},
      {"direct_window", [](CollectiveSpec& s) { s.options.direct_window = 2; }},
      {"dims",
       [](CollectiveSpec& s) {
         s.options.dims = {2, 4};
       }},
      {"involved_dim", [](CollectiveSpec& s) { s.options.involved_dim = {true}; }},
      {"optimization",
       [](CollectiveSpec& s) { s.options.optimization = collective::Optimization::kLocalBwAware; }},
      {"inter_dim",
       [](CollectiveSpec& s) { s.options.inter_dim = collective::InterDimScheduling::kThemis; }},
      {"dim_bandwidth", [](CollectiveSpec& s) { s.options.dim_bandwidth = {50.0}; }},
      {"chunks", [](CollectiveSpec& s) { s.options.chunks = 4; }},
      {"active_chunks", [](CollectiveSpec& s) { s.options.active_chunks = 2; }},
      {"channels", [](CollectiveSpec& s) { s.options.channels = 2; }},
      {"slice_bytes", [](CollectiveSpec& s) { s.options.slice_bytes = 4096; }},
      {"custom", [custom](CollectiveSpec& s) { s.options.custom = custom; }},
      {"tree_stream", [](CollectiveSpec& s) { s.options.tree_stream = 1; }},
  };
  for (const auto& [field, change] : changes) {
    CollectiveSpec s = base;
    change(s);
    EXPECT_FALSE(MemoKey(s, 3) == k0) << field;
  }
  EXPECT_FALSE(MemoKey(base, 4) == k0) << "group_index";
  CollectiveSpec later = base;
  later.options.tree_stream = 2;  // the same tree as 0
  EXPECT_TRUE(MemoKey(later, 3) == k0);
}

// The memo hands out what PlanChunk would plan, chunk by chunk, and the second time the same
// objects without planning.
TEST(PlanMemo, PlansOnceAndGivesTheChunksPlanChunkWould) {
  const auto spec = RingAllReduce(8, 64 << 10, 3);
  PlanMemo memo;
  auto first = memo.Get(spec, 5, 8);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_NE(*first, nullptr);
  ASSERT_EQ((*first)->size(), 3u);
  for (int k = 0; k < 3; ++k) {
    auto plan = collective::PlanChunk(spec, 5, k);
    ASSERT_TRUE(plan.ok());
    EXPECT_TRUE(*(**first)[static_cast<size_t>(k)] == Compact(*plan, 5, 8, nullptr)) << k;
  }
  EXPECT_EQ(memo.misses(), 1u);
  auto again = memo.Get(spec, 5, 8);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first->get());
  EXPECT_EQ(memo.hits(), 1u);
  auto other = memo.Get(spec, 6, 8);  // another member: its own plan
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->get(), first->get());
  EXPECT_EQ(memo.misses(), 2u);
}

TEST(PlanMemo, APlanningErrorIsReturnedNotRemembered) {
  auto spec = RingAllReduce(8, 64 << 10, 1);
  spec.group[3] = spec.group[2];  // a rank twice in its group
  PlanMemo memo;
  EXPECT_FALSE(memo.Get(spec, 0, 8).ok());
  EXPECT_FALSE(memo.Get(spec, 0, 8).ok());
  EXPECT_EQ(memo.misses(), 2u);
}

// A rank whose collectives add up to more steps than the memo holds plans again rather than
// growing without bound.
TEST(PlanMemo, StartsAgainEmptyPastItsSteps) {
  PlanMemo memo;
  const auto first = RingAllReduce(1024, 1 << 20, 1);
  ASSERT_TRUE(memo.Get(first, 0, 1024).ok());
  const uint64_t per_plan = memo.held_steps();
  ASSERT_GT(per_plan, 1000u);
  Bytes size = 1 << 20;
  while (memo.held_steps() + per_plan <= PlanMemo::kMaxSteps) {
    size += 1024 * 4;  // another collective of the same shape
    ASSERT_TRUE(memo.Get(RingAllReduce(1024, size, 1), 0, 1024).ok());
  }
  ASSERT_TRUE(memo.Get(first, 0, 1024).ok());
  EXPECT_EQ(memo.hits(), 1u) << "still held";
  ASSERT_TRUE(memo.Get(RingAllReduce(1024, size + 4096, 1), 0, 1024).ok());  // past the cap
  EXPECT_LE(memo.held_steps(), per_plan);
  ASSERT_TRUE(memo.Get(first, 0, 1024).ok());
  EXPECT_EQ(memo.hits(), 1u) << "planned again after the memo started empty";
}

TEST(PlanMemo, APlanLargerThanTheMemoIsNotKept) {
  PlanMemo memo;
  collective::CollectiveSpec all_to_all = RingAllReduce(1024, 1 << 20, 1);
  all_to_all.type = CollectiveType::kAllToAll;  // ring: ~N^2/2 steps for one rank
  auto got = memo.Get(all_to_all, 0, 1024);
  ASSERT_TRUE(got.ok()) << got.status().message();
  uint64_t steps = 0;
  for (const auto& c : **got) steps += c->size();
  ASSERT_GT(steps, PlanMemo::kMaxSteps);
  EXPECT_EQ(memo.held_steps(), 0u);
}

}  // namespace
}  // namespace genie::runtime
