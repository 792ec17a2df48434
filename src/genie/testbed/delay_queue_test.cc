// ReleaseSchedule (when a delayed packet leaves) and the option checks. The kernel side of the
// helper is covered by tests/netdelay_e2e_test.cc.
#include "genie/testbed/delay_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace genie::testbed {
namespace {

constexpr TimeNs kMs = kNsPerMs;

TEST(ReleaseSchedule, WithoutJitterEveryPacketLeavesExactlyTheDelayAfterItArrived) {
  ReleaseSchedule s(20 * kMs, 0, 1);
  EXPECT_EQ(s.Add(7, 1000), 1000 + 20 * kMs);
  EXPECT_EQ(s.Add(8, 1500), 1500 + 20 * kMs);
  EXPECT_EQ(s.Add(9, 1500), 1500 + 20 * kMs);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.NextRelease(), 1000 + 20 * kMs);
}

TEST(ReleaseSchedule, PopDueReleasesThePrefixThatIsDueAndSaysHowLate) {
  ReleaseSchedule s(10, 0, 1);
  s.Add(1, 0);    // 10
  s.Add(2, 5);    // 15
  s.Add(3, 100);  // 110
  EXPECT_FALSE(s.PopDue(9).has_value());
  std::vector<TimeNs> late;
  auto r = s.PopDue(20, [&](TimeNs l) { late.push_back(l); });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->last_id, 2u);
  EXPECT_EQ(r->count, 2u);
  EXPECT_EQ(r->max_late, 10);
  EXPECT_EQ(late, (std::vector<TimeNs>{10, 5}));
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.NextRelease(), 110);
  EXPECT_FALSE(s.PopDue(109).has_value());
  r = s.PopDue(110);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->last_id, 3u);
  EXPECT_TRUE(s.empty());
}

TEST(ReleaseSchedule, JitterOnSparsePacketsIsUniformOverItsWholeRange) {
  const TimeNs delay = 20 * kMs, jitter = 5 * kMs;
  ReleaseSchedule s(delay, jitter, 42);
  TimeNs lo = delay, hi = delay, sum = 0;
  constexpr int kPackets = 20000;
  int low_half = 0;
  for (uint32_t i = 0; i < kPackets; ++i) {
    const TimeNs arrival = static_cast<TimeNs>(i) * 50 * kMs;  // apart by more than 2 x jitter
    const TimeNs d = s.Add(i, arrival) - arrival;
    EXPECT_GE(d, delay - jitter) << i;
    EXPECT_LE(d, delay + jitter) << i;
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    sum += d;
    low_half += d < delay;
  }
  EXPECT_LT(lo, delay - jitter + 10 * kNsPerUs);
  EXPECT_GT(hi, delay + jitter - 10 * kNsPerUs);
  EXPECT_NEAR(static_cast<double>(sum) / kPackets, static_cast<double>(delay), 0.02 * kMs * 5);
  EXPECT_NEAR(low_half, kPackets / 2, kPackets / 20);
}

TEST(ReleaseSchedule, DensePacketsNeverOvertakeEachOtherSoTheirDelayLeansToTheTop) {
  const TimeNs delay = 20 * kMs, jitter = 5 * kMs;
  ReleaseSchedule s(delay, jitter, 42);
  TimeNs prev = 0, sum = 0;
  constexpr int kPackets = 20000;
  for (uint32_t i = 0; i < kPackets; ++i) {
    const TimeNs arrival = static_cast<TimeNs>(i) * 100 * kNsPerUs;  // 10k packets/s
    const TimeNs release = s.Add(i, arrival);
    EXPECT_GE(release, prev) << "packet " << i << " would overtake packet " << i - 1;
    const TimeNs d = release - arrival;
    // Held back behind the packet before is still within the bound: that one arrived earlier.
    EXPECT_GE(d, delay - jitter) << i;
    EXPECT_LE(d, delay + jitter) << i;
    sum += d;
    prev = release;
  }
  // The documented cost of keeping the order: 100 draws per jitter range, so most packets wait
  // behind a late draw of the last 10 ms (here the mean is ≈ 23.8 ms, not 20).
  EXPECT_GT(static_cast<double>(sum) / kPackets, static_cast<double>(delay + jitter * 2 / 3));
}

TEST(ReleaseSchedule, TheSameSeedGivesTheSameDelaysAndAnotherSeedOthers) {
  ReleaseSchedule a(kMs, kMs / 2, 7), b(kMs, kMs / 2, 7), c(kMs, kMs / 2, 8);
  int differ = 0;
  for (uint32_t i = 0; i < 100; ++i) {
    const TimeNs t = static_cast<TimeNs>(i) * 10 * kMs;  // far apart: no monotone clamping
    const TimeNs ra = a.Add(i, t), rb = b.Add(i, t), rc = c.Add(i, t);
    EXPECT_EQ(ra, rb);
    differ += ra != rc;
  }
  EXPECT_GT(differ, 90);
}

TEST(ReleaseSchedule, JitterLargerThanTheDelayIsClampedAtZero) {
  ReleaseSchedule s(kNsPerUs, kMs, 3);
  TimeNs t = 0;
  for (uint32_t i = 0; i < 1000; ++i, t += 10 * kMs) EXPECT_GE(s.Add(i, t), t);
}

TEST(ReleaseSchedule, PopAllTakesEverythingDueOrNot) {
  ReleaseSchedule s(kMs, 0, 1);
  EXPECT_FALSE(s.PopAll().has_value());
  s.Add(4, 0);
  s.Add(5, 1);
  auto r = s.PopAll();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->last_id, 5u);
  EXPECT_EQ(r->count, 2u);
  EXPECT_TRUE(s.empty());
}

TEST(DelayQueueOptions, NonsenseIsRefusedWithTheReason) {
  DelayQueueOptions o;
  o.delay = 20 * kMs;
  EXPECT_TRUE(ValidateDelayQueueOptions(o).ok());
  auto bad = [](DelayQueueOptions x) { return ValidateDelayQueueOptions(x).message(); };
  DelayQueueOptions q = o;
  q.queue_num = 65536;
  EXPECT_NE(bad(q).find("0 to 65535"), std::string::npos) << bad(q);
  q = o;
  q.jitter = -1;
  EXPECT_NE(bad(q).find("0 or more"), std::string::npos) << bad(q);
  q = o;
  q.delay = 2 * 3600 * kNsPerSec;
  EXPECT_NE(bad(q).find("more than an hour"), std::string::npos) << bad(q);
  q = o;
  q.max_packets = 0;
  EXPECT_NE(bad(q).find("at least 1 packet"), std::string::npos) << bad(q);
}

TEST(DelayQueue, BadOptionsExitWithTwoBeforeTouchingTheKernel) {
  DelayQueueOptions o;
  o.queue_num = -1;
  EXPECT_EQ(RunDelayQueue(o), 2);
}

}  // namespace
}  // namespace genie::testbed
