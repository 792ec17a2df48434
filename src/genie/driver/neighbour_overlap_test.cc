// How much of an iteration a neighbour job covered, and the interference and filled idle time
// that follow from it.
#include "genie/driver/neighbour_overlap.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

TEST(NeighbourOverlapTest, MergesAndMeasuresTheCoveredShare) {
  const std::vector<Interval> busy = MergeIntervals({{50, 60}, {0, 10}, {5, 20}, {30, 30}});
  EXPECT_EQ(busy, (std::vector<Interval>{{0, 20}, {50, 60}}));
  EXPECT_DOUBLE_EQ(OverlapShare({0, 100}, busy), 0.3);
  EXPECT_DOUBLE_EQ(OverlapShare({10, 20}, busy), 1.0);
  EXPECT_DOUBLE_EQ(OverlapShare({20, 50}, busy), 0.0);
  EXPECT_DOUBLE_EQ(OverlapShare({15, 55}, busy), 10.0 / 40.0);
  EXPECT_DOUBLE_EQ(OverlapShare({5, 5}, busy), 0.0);
}

// A 1 MiB all-reduce beside another: 15 ms alone, 28 ms with the other's steps over 90 % of it
// in the simulation: a full overlap costs 13 / 0.9 = 14.4 ms, so an iteration the other covered
// 60 % of gets 8.7 ms, one it covered wholly 14.4 ms. An iteration the simulation barely
// overlapped (30 %) says little: the median of the others' full cost stands for it.
TEST(NeighbourOverlapTest, ScalesTheInterferenceToTheMeasuredOverlap) {
  const std::vector<TimeNs> simulated = {13'000'000, 13'000'000, 3'000'000};
  const std::vector<double> overlap = {0.9, 0.9, 0.3};
  const std::map<int, TimeNs> scaled =
      ScaledInterference(simulated, overlap, {{0, 0.6}, {1, 1.0}, {2, 1.0}, {5, 0.5}});
  ASSERT_EQ(scaled.size(), 4u);
  EXPECT_EQ(scaled.at(0), 8'666'667);
  EXPECT_EQ(scaled.at(1), 14'444'444);
  EXPECT_EQ(scaled.at(2), 14'444'444);  // the median's, not 3 ms / 0.3
  EXPECT_EQ(scaled.at(5), 7'222'222);   // past the simulation: the median's
  // Nothing overlapped enough in the simulation: nothing to scale from.
  EXPECT_TRUE(ScaledInterference(simulated, {0.1, 0.2, 0.3}, {{0, 1.0}}).empty());
}

// 16 ms predicted alone with its measured skew, 14.5 ms in the jobs simulation: 1.5 ms of idle
// ranks, of which the neighbour filled the share it covered; never more than the interference,
// and bbr's probes (both jobs' at once) are nobody's to fill.
TEST(NeighbourOverlapTest, FillsTheIdleTimeItCoversAndNotTheProbes) {
  EXPECT_EQ(FilledIdle(16'000'000, 0, 14'500'000, 0.8, 13'000'000), 1'200'000);
  EXPECT_EQ(FilledIdle(16'000'000, 0, 14'500'000, 0.8, 1'000'000), 1'000'000);
  EXPECT_EQ(FilledIdle(16'000'000, 1'000'000, 14'500'000, 1.0, 13'000'000), 500'000);
  EXPECT_EQ(FilledIdle(14'000'000, 0, 14'500'000, 1.0, 13'000'000), 0);  // faster than simulated
  EXPECT_EQ(FilledIdle(16'000'000, 0, 14'500'000, 1.0, 0), 0);           // no interference
  EXPECT_EQ(FilledIdle(16'000'000, 0, 14'500'000, 0.0, 13'000'000), 0);  // not covered
}

class RecordedActivityTest : public ::testing::Test {
 protected:
  // Rank `rank`'s stream of run `run` (its clock `offset` from rank 0's): its header
  // (`iterations` measured after one warm-up), clock record, an op, then one rank record per
  // [start, finish), from the warm-up on.
  void Stream(int rank, int iterations, const std::vector<Interval>& steps,
              const std::string& run = "r1", TimeNs offset = 0) const {
    std::ofstream out(std::filesystem::path(tmp_.path()) / ("rank-" + std::to_string(rank) + ".jsonl"));
    out << R"({"format":"genie-record","record":"header","run":{"rank":)" << rank
        << R"(,"iterations":)" << iterations << R"(,"warmup":1}})" << "\n";
    out << R"({"record":"clock","rank":)" << rank << R"(,"offset_ns":)" << offset
        << R"(,"run_id":")" << run << R"("})" << "\n";
    out << R"({"record":"op","rank":)" << rank << R"(,"iteration":0,"start":1,"end":2})" << "\n";
    int iteration = -1;
    for (const auto& [start, finish] : steps) {
      out << R"({"record":"rank","rank":)" << rank << R"(,"iteration":)" << iteration++
          << R"(,"start":)" << start << R"(,"finish":)" << finish << "}\n";
    }
  }
  ::genie::testing::TempDir tmp_{"neighbour_overlap"};
};

TEST_F(RecordedActivityTest, EachIterationFromItsFirstStartToItsLastFinish) {
  EXPECT_FALSE(RecordedActivity(tmp_.path()).has_value());
  Stream(0, 2, {{100, 200}, {210, 300}, {305, 400}});
  Stream(1, 2, {{110, 205}, {212, 290}, {306, 420}});
  const auto busy = RecordedActivity(tmp_.path());
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(*busy, (std::vector<Interval>{{100, 205}, {210, 300}, {305, 420}}));
}

// Each stream is moved onto rank 0's clock by its offset; an earlier run's leftover stream in
// the folder (a rank the new run does not have) is not this run's.
TEST_F(RecordedActivityTest, OnlyTheFoldersRunOnRankZerosClock) {
  Stream(0, 2, {{100, 200}, {210, 300}, {305, 400}}, "new");
  Stream(1, 2, {{90, 195}, {200, 290}, {296, 420}}, "new", 10);
  Stream(7, 5, {{5'000, 6'000}}, "old");  // incomplete: would make the job run forever
  const auto busy = RecordedActivity(tmp_.path());
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(*busy, (std::vector<Interval>{{100, 205}, {210, 300}, {305, 430}}));
}

// A job still running (a rank short of its last iteration) keeps the links busy past what it
// recorded.
TEST_F(RecordedActivityTest, AJobStillRunningIsBusyFromItsLastFinishOn) {
  Stream(0, 3, {{100, 200}, {210, 300}, {305, 400}, {410, 500}});
  Stream(1, 3, {{100, 200}, {210, 300}, {305, 400}});
  const auto busy = RecordedActivity(tmp_.path());
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->back(), (Interval{410, std::numeric_limits<TimeNs>::max()}));
  // A rank that has recorded no iteration yet is running too (rank 0 alone is complete).
  Stream(1, 3, {}, "r1");
  EXPECT_EQ(RecordedActivity(tmp_.path())->back(),
            (Interval{410, std::numeric_limits<TimeNs>::max()}));
}

}  // namespace
}  // namespace genie::driver
