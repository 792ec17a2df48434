#include "genie/record/cpu_wait.h"

#include <gtest/gtest.h>

#include <time.h>

#include <cstdint>

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
  // Spin for 20 ms of this thread's CPU time (not wall time: under load the wall clock runs on
  // while the thread waits for a core).
  auto cpu_now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  const int64_t until = cpu_now() + 20'000'000;
  volatile uint64_t x = 0;
  while (cpu_now() < until) x = x + 1;
  auto after = ReadThreadCpuTimes();
  ASSERT_TRUE(after.has_value());
  EXPECT_GT(after->run_ns - before->run_ns, 10'000'000);
  EXPECT_GE(after->wait_ns, before->wait_ns);
}

}  // namespace
}  // namespace genie::record
