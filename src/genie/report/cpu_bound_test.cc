#include "genie/report/cpu_bound.h"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::report {
namespace {

// Two ranks, iterations -1 (warm-up), 0 and 1, each 10 ms long, with the given waits.
std::vector<record::RankSummary> Ranks(TimeNs wait0, TimeNs wait1) {
  std::vector<record::RankSummary> out;
  for (int it = -1; it <= 1; ++it) {
    for (int r = 0; r < 2; ++r) {
      record::RankSummary s;
      s.rank = r;
      s.iteration = it;
      s.start = (it + 1) * 20'000'000;
      s.finish = s.start + 10'000'000;
      s.cpu_wait_ns = r == 1 && it == 1 ? wait1 : (it == 0 ? wait0 : 10'000);
      out.push_back(s);
    }
  }
  return out;
}

TEST(CpuBound, AnIterationWhoseRankWaitedForACoreIsNamedWithItsRank) {
  auto bound = CpuBoundIterations(Ranks(/*wait0=*/100'000, /*wait1=*/3'000'000));
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].iteration, 1);
  EXPECT_EQ(bound[0].rank, 1);
  EXPECT_EQ(bound[0].wait_ns, 3'000'000);
  EXPECT_EQ(bound[0].step_ns, 10'000'000);
  EXPECT_DOUBLE_EQ(bound[0].fraction(), 0.3);
  EXPECT_EQ(bound[0].ranks_over, 1);
  const auto j = CpuBoundJson(bound);
  EXPECT_EQ(j["iterations"][0]["rank"], 1);
  std::ostringstream out;
  PrintCpuBound(out, Ranks(100'000, 3'000'000));
  EXPECT_NE(out.str().find("CPU-bound: in 1 of the measured iterations (1)"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("rank 1 in iteration 1, 30.0 %"), std::string::npos) << out.str();
}

TEST(CpuBound, WaitsUnderTheThresholdAreHealthyAndSaidSo) {
  auto ranks = Ranks(100'000, 200'000);
  EXPECT_TRUE(CpuBoundIterations(ranks).empty());
  EXPECT_TRUE(CpuBoundJson({}).is_null());
  EXPECT_DOUBLE_EQ(WorstCpuWaitFraction(ranks), 0.02);
  std::ostringstream out;
  PrintCpuBound(out, ranks);
  EXPECT_NE(out.str().find("at most 2.0 %"), std::string::npos) << out.str();
}

TEST(CpuBound, AWarmUpIsNeverJudged) {
  auto ranks = Ranks(0, 0);
  for (auto& s : ranks) s.cpu_wait_ns = s.iteration < 0 ? 9'000'000 : 1;
  EXPECT_TRUE(CpuBoundIterations(ranks).empty());
}

TEST(CpuBound, RanksWithoutWaitsSayNothing) {
  auto ranks = Ranks(0, 0);
  for (auto& s : ranks) s.cpu_wait_ns = 0;
  EXPECT_TRUE(CpuBoundIterations(ranks).empty());
  std::ostringstream out;
  PrintCpuBound(out, ranks);
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace genie::report
