#include "genie/record/cpu_wait.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace genie::record {
namespace {

TEST(CpuWait, ParsesTheSchedulersThreeFields) {
  auto t = ParseSchedstat("506169976 734766233 353\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->run_ns, 506169976);
  EXPECT_EQ(t->wait_ns, 734766233);
}

TEST(CpuWait, RefusesWhatIsNotASchedstat) {
  EXPECT_FALSE(ParseSchedstat("").has_value());
  EXPECT_FALSE(ParseSchedstat("12").has_value());
  EXPECT_FALSE(ParseSchedstat("a b c").has_value());
  EXPECT_FALSE(ParseSchedstat("-1 5 3").has_value());
}

// This thread's run time grows while it spins; its wait never goes backwards.
TEST(CpuWait, ThisThreadsRunTimeGrowsWhileItSpins) {
  auto before = ReadThreadCpuTimes();
  if (!before) GTEST_SKIP() << "this kernel has no /proc/thread-self/schedstat";
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
  volatile uint64_t x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1;
  auto after = ReadThreadCpuTimes();
  ASSERT_TRUE(after.has_value());
  EXPECT_GT(after->run_ns - before->run_ns, 5'000'000);
  EXPECT_GE(after->wait_ns, before->wait_ns);
}

}  // namespace
}  // namespace genie::record
