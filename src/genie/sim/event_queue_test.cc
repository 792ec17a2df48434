#include "genie/sim/event_queue.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "genie/common/checked_math.h"

namespace genie::sim {
namespace {

TEST(EventQueueTest, RunsInTimeOrderThenInsertionOrder) {
  EventQueue q;
  std::vector<std::string> log;
  auto note = [&](std::string s) { return [&log, &q, s] { log.push_back(s + "@" + std::to_string(q.Now())); }; };
  q.At(30, note("c"));
  q.At(10, note("a1"));
  q.At(20, note("b"));
  q.At(10, note("a2"));
  q.At(10, note("a3"));
  EXPECT_EQ(q.pending(), 5u);
  EXPECT_EQ(q.Run(), 5u);
  EXPECT_EQ(log, (std::vector<std::string>{"a1@10", "a2@10", "a3@10", "b@20", "c@30"}));
  EXPECT_EQ(q.Now(), 30);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.executed(), 5u);
}

TEST(EventQueueTest, ZeroDelayEventsRunAfterThoseAlreadyDue) {
  EventQueue q;
  std::vector<int> order;
  q.At(5, [&] {
    order.push_back(1);
    q.After(0, [&] { order.push_back(3); });
    q.After(1, [&] { order.push_back(4); });
  });
  q.At(5, [&] { order.push_back(2); });
  q.Run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(q.Now(), 6);
}

TEST(EventQueueTest, RunOneAdvancesTheClock) {
  EventQueue q;
  int hits = 0;
  q.After(7, [&] { ++hits; });
  EXPECT_EQ(q.Now(), 0);
  EXPECT_TRUE(q.RunOne());
  EXPECT_EQ(q.Now(), 7);
  EXPECT_FALSE(q.RunOne());
  EXPECT_EQ(hits, 1);
}

TEST(EventQueueDeathTest, SchedulingInThePastIsABug) {
  EventQueue q;
  q.At(10, [] {});
  q.Run();
  EXPECT_DEATH(q.At(5, [] {}), "past");
}

}  // namespace
}  // namespace genie::sim

namespace genie::sim {
namespace {

// Time past int64 ns is refused, not wrapped: the queue fails, keeps the first error and runs
// nothing more.
TEST(EventQueueTest, AnEventPastTheEndOfTimeFailsTheQueue) {
  EventQueue q;
  int ran = 0;
  q.At(100, [&] { ++ran; });
  q.At(kMaxTimeNs - 10, [&] {
    ++ran;
    EXPECT_TRUE(q.Fits(9));
    EXPECT_FALSE(q.Fits(10));  // would land on kMaxTimeNs: refused
    q.After(kMaxTimeNs, [&] { ++ran; });
    q.After(1, [&] { ++ran; });  // never runs: the queue has failed
  });
  q.Run();
  EXPECT_EQ(ran, 2);
  ASSERT_TRUE(q.failed());
  EXPECT_NE(q.status().message().find("simulated time overflows"), std::string::npos)
      << q.status().message();
  q.Fail(Status::InvalidArgument("second"));  // the first failure is kept
  EXPECT_EQ(q.status().message().find("second"), std::string::npos);
  EXPECT_FALSE(q.RunOne());
}

TEST(EventQueueTest, FailDropsPendingEvents) {
  EventQueue q;
  int ran = 0;
  q.At(5, [&] { q.Fail(Status::InvalidArgument("stop here")); });
  q.At(6, [&] { ++ran; });
  EXPECT_EQ(q.Run(), 1u);
  EXPECT_EQ(ran, 0);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.status().message(), "stop here");
}

}  // namespace
}  // namespace genie::sim
