// CPU steal from /proc/stat text: parsing, the fraction between two readings, and what is left
// out when a reading is missing or malformed.
#include "genie/record/cpu_steal.h"

#include <gtest/gtest.h>

namespace genie::record {
namespace {

TEST(CpuSteal, ParsesTheMachineLineAndTakesTheStolenShare) {
  const std::string before_text =
      "cpu  100 5 50 800 10 0 5 30 7 0\ncpu0 50 2 25 400 5 0 2 15 0 0\nintr 1 2 3\n";
  const std::string after_text =
      "cpu  160 5 70 900 10 0 15 70 9 0\ncpu0 80 2 35 450 5 0 7 35 0 0\n";
  auto before = ParseCpuTicks(before_text);
  auto after = ParseCpuTicks(after_text);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->total, 1000u);  // user..steal; guest (7) is inside user already
  EXPECT_EQ(before->steal, 30u);
  auto j = CpuStealJson(before, after);
  EXPECT_EQ(j.value("ticks", 0u), 230u);
  EXPECT_NEAR(j.value("steal_fraction", -1.0), 40.0 / 230.0, 1e-12);
}

TEST(CpuSteal, MissingOrMalformedReadingsGiveNothing) {
  EXPECT_FALSE(ParseCpuTicks("cpu0 1 2 3 4 5 6 7 8\n"));  // no machine line
  EXPECT_FALSE(ParseCpuTicks("cpu  1 2 3\n"));             // a kernel without steal
  auto t = ParseCpuTicks("cpu  1 2 3 4 5 6 7 8\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->idle, 4u + 5u);  // idle + iowait
  EXPECT_EQ(t->busy(), 36u - 9u);
  EXPECT_TRUE(CpuStealJson(std::nullopt, t).empty());
  EXPECT_TRUE(CpuStealJson(t, t).empty());  // no tick passed
  EXPECT_TRUE(ReadCpuTicks().has_value());  // this machine's /proc/stat
}

}  // namespace
}  // namespace genie::record
