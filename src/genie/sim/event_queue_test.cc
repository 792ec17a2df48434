#include "genie/sim/event_queue.h"

#include <functional>
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

// The buckets and the heap of distinct times must give exactly the order of a heap of
// (time, insertion number): a pseudo-random mix of closures and (handler, arg) events, many at
// equal times, some scheduled from inside events at the current time or later.
TEST(EventQueueTest, BucketsRunInTheOrderOfTimeThenInsertion) {
  EventQueue q;
  struct Expected {
    TimeNs when;
    uint64_t seq;
  };
  std::vector<Expected> scheduled;  // by id
  std::vector<uint64_t> ran;        // ids, in run order
  struct Recorder final : EventHandler {
    std::vector<uint64_t>* ran;
    void OnEvent(uint64_t id) override { ran->push_back(id); }
  } recorder;
  recorder.ran = &ran;
  uint64_t rng = 12345;
  auto next = [&rng] {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return rng >> 33;
  };
  std::function<void(int)> add = [&](int depth) {
    const uint64_t id = scheduled.size();
    const TimeNs when = q.Now() + static_cast<TimeNs>(next() % 4) * 10;  // few distinct times
    scheduled.push_back({when, id});
    if (depth > 0 && next() % 2 == 0) {
      q.At(when, [&, id, depth] {
        ran.push_back(id);
        for (int k = 0; k < 2; ++k) add(depth - 1);
      });
    } else {
      q.At(when, &recorder, id);
    }
  };
  for (int i = 0; i < 200; ++i) add(3);
  const uint64_t total = q.Run();
  ASSERT_EQ(total, scheduled.size());
  ASSERT_EQ(ran.size(), scheduled.size());
  // Each event ran at or after everything due before it, and among equal times by insertion.
  for (size_t i = 1; i < ran.size(); ++i) {
    const Expected& a = scheduled[ran[i - 1]];
    const Expected& b = scheduled[ran[i]];
    EXPECT_TRUE(a.when < b.when || (a.when == b.when && a.seq < b.seq))
        << "event " << ran[i - 1] << " (t=" << a.when << ") ran before " << ran[i]
        << " (t=" << b.when << ")";
  }
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
