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

}  // namespace
}  // namespace genie::report
