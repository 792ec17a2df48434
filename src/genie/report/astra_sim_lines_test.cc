#include "genie/report/astra_sim_lines.h"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::report {
namespace {

TEST(AstraSimLinesTest, ExactlyAstraSimsFormatInRankOrder) {
  // The Ring_4chunks figure: 64,440 ns on every rank of 8, no compute.
  std::vector<record::RankSummary> ranks;
  for (int r = 7; r >= 0; --r) ranks.push_back({r, 0, 0, 64440, 0, 64440, 64440});
  std::ostringstream out;
  PrintAstraSimLines(out, ranks);
  std::string expected;
  for (int r = 0; r < 8; ++r) {
    expected += "sys[" + std::to_string(r) +
                "] finished, 64440 cycles, exposed communication 64440 cycles.\n";
  }
  EXPECT_EQ(out.str(), expected);
}

// T sums the measured iterations' own times (2000 + 1900): the 100 ns between them are genie's
// barrier, not the workload's.
TEST(AstraSimLinesTest, TotalIsTheSumOfMeasuredIterationsAndExposedIsThatMinusCompute) {
  std::vector<record::RankSummary> ranks = {
      {0, -1, 0, 400, 100, 300, 300},         // warm-up: not counted
      {0, 0, 1000, 3000, 1500, 500, 500},
      {0, 1, 3100, 5000, 1500, 400, 400},
      {1, 0, 0, 123456789012, 1, 0, 123456789011},
  };
  std::ostringstream out;
  PrintAstraSimLines(out, ranks);
  EXPECT_EQ(out.str(),
            "sys[0] finished, 3900 cycles, exposed communication 900 cycles.\n"
            "sys[1] finished, 123456789012 cycles, exposed communication 123456789011 cycles.\n");
}

// Past max_lines ranks: the first and last max_lines/4, the ranks of interest, a count of the
// rest and min/median/max across all ranks (here rank r finishes at 1000 + r, 10 is slowest).
TEST(AstraSimLinesTest, BoundedLinesShowEdgesRanksOfInterestAndStatistics) {
  std::vector<record::RankSummary> ranks;
  for (int r = 0; r < 20; ++r) {
    const TimeNs t = r == 10 ? 5000 : 1000 + r;
    ranks.push_back({r, 0, 0, t, 0, t, t});
  }
  std::ostringstream out;
  PrintAstraSimLinesBounded(out, ranks, 8, {12});
  std::string expected;
  for (int r : {0, 1, 12, 18, 19}) {
    const TimeNs t = 1000 + r;
    expected += "sys[" + std::to_string(r) + "] finished, " + std::to_string(t) +
                " cycles, exposed communication " + std::to_string(t) + " cycles.\n";
  }
  expected +=
      "... 15 of 20 ranks' lines not shown (--all-ranks prints them; --ranks-of-interest picks "
      "ranks)\n"
      "all 20 ranks: finished min 1000 (rank 0), median 1011, max 5000 (rank 10) cycles; exposed "
      "communication min 1000 (rank 0), median 1011, max 5000 (rank 10) cycles.\n";
  EXPECT_EQ(out.str(), expected);
  std::ostringstream small;
  PrintAstraSimLinesBounded(small, ranks, 20, {});
  std::ostringstream full;
  PrintAstraSimLines(full, ranks);
  EXPECT_EQ(small.str(), full.str());
}

}  // namespace
}  // namespace genie::report
