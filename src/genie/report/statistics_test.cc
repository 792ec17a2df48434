#include "genie/report/statistics.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

using record::OpEvent;
using record::RankSummary;

TEST(StatisticsTest, SpreadOfOddAndEvenCounts) {
  Spread s = SpreadOf({30, 10, 20});
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.median, 20);
  EXPECT_EQ(s.max, 30);
  s = SpreadOf({40, 10, 20, 31});
  EXPECT_EQ(s.median, 25);  // (20 + 31) / 2 rounded down
  s = SpreadOf({});
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 0);
}

std::vector<RankSummary> TwoRanksTwoIterationsAndAWarmup() {
  return {
      // rank, iteration, start, finish, compute, comm, exposed
      {0, -1, 0, 500, 100, 400, 400},  // warm-up: left out
      {0, 0, 1000, 2000, 300, 700, 700},
      {1, 0, 1010, 2100, 200, 800, 890},
      {0, 1, 2200, 3000, 300, 500, 500},
      {1, 1, 2205, 3500, 200, 900, 1095},
  };
}

TEST(StatisticsTest, TotalsPerRankSumMeasuredIterationsLeavingOutTheTimeBetweenThem) {
  auto t = TotalsPerRank(TwoRanksTwoIterationsAndAWarmup());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].rank, 0);
  EXPECT_EQ(t[0].iterations, 2);
  EXPECT_EQ(t[0].start, 1000);
  EXPECT_EQ(t[0].finish, 3000);
  EXPECT_EQ(t[0].compute_ns, 600);
  EXPECT_EQ(t[0].comm_ns, 1200);
  EXPECT_EQ(t[0].elapsed_ns, 1000 + 800);  // not the span 2000: 200 ns between iterations
  EXPECT_EQ(t[0].span(), 2000);
  EXPECT_EQ(t[0].exposed_comm_ns, 1800 - 600);
  EXPECT_EQ(t[1].rank, 1);
  EXPECT_EQ(t[1].start, 1010);
  EXPECT_EQ(t[1].finish, 3500);
  EXPECT_EQ(t[1].elapsed_ns, 1090 + 1295);
  EXPECT_EQ(t[1].exposed_comm_ns, 2385 - 400);
}

TEST(StatisticsTest, StepTimeIsLastFinishMinusFirstStart) {
  auto steps = StepTimes(TwoRanksTwoIterationsAndAWarmup());
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].iteration, 0);
  EXPECT_EQ(steps[0].step_ns(), 2100 - 1000);
  EXPECT_EQ(steps[1].iteration, 1);
  EXPECT_EQ(steps[1].step_ns(), 3500 - 2200);
}

// Asked for, the warm-ups come first, by iteration like the others.
TEST(StatisticsTest, StepTimesWithWarmupsKeepsThem) {
  auto steps = StepTimes(TwoRanksTwoIterationsAndAWarmup(), /*with_warmups=*/true);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].iteration, -1);
  EXPECT_EQ(steps[0].step_ns(), 500);
  EXPECT_EQ(steps[1].iteration, 0);
}

OpEvent Coll(int rank, CollectiveType type, Bytes size, int n, TimeNs start, TimeNs end,
             int iteration = 0) {
  OpEvent e;
  e.rank = rank;
  e.iteration = iteration;
  e.kind = OpKind::kCollective;
  e.coll_type = type;
  e.size = size;
  e.group_size = n;
  e.start = start;
  e.end = end;
  return e;
}

TEST(StatisticsTest, TypeTableIsTimeWeighted) {
  OpEvent send;
  send.kind = OpKind::kSend;
  send.size = 5000;
  send.start = 0;
  send.end = 10;
  OpEvent compute;
  compute.kind = OpKind::kCompute;
  compute.end = 1000000;
  std::vector<OpEvent> ops = {
      Coll(0, CollectiveType::kAllReduce, 1000000, 4, 0, 1000),
      Coll(1, CollectiveType::kAllReduce, 1000000, 4, 0, 3000),
      Coll(0, CollectiveType::kAllGather, 1000, 4, 0, 4),
      Coll(0, CollectiveType::kAllReduce, 1, 4, 0, 999999, /*iteration=*/-1),  // warm-up
      send,
      compute,
  };
  auto rows = CollectiveTypeTable(ops);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].type, "all_reduce");
  EXPECT_EQ(rows[0].count, 2);
  EXPECT_EQ(rows[0].bytes, 2000000u);
  EXPECT_EQ(rows[0].total_ns, 4000);
  EXPECT_DOUBLE_EQ(rows[0].mean_ns, 2000.0);
  EXPECT_DOUBLE_EQ(rows[0].algbw_gbps, 500.0);  // 2e6 B / 4000 ns
  EXPECT_DOUBLE_EQ(rows[0].busbw_gbps, 750.0);  // x 2(n-1)/n = 1.5
  EXPECT_EQ(rows[1].type, "all_gather");
  EXPECT_DOUBLE_EQ(rows[1].algbw_gbps, 1000.0);  // 1000 B x 4 ranks / 4 ns
  EXPECT_DOUBLE_EQ(rows[1].busbw_gbps, 750.0);
  EXPECT_EQ(rows[2].type, "send");
  EXPECT_DOUBLE_EQ(rows[2].algbw_gbps, 500.0);
  EXPECT_DOUBLE_EQ(rows[2].busbw_gbps, 500.0);
}

}  // namespace
}  // namespace genie::report
