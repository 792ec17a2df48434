#include "genie/loop/event_loop.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "genie/env/faulty_env.h"
#include "genie/env/manual_env.h"

namespace genie::loop {
namespace {

std::unique_ptr<EventLoop> MakeLoop(bool spin = true, env::Env* env = nullptr) {
  SleepPolicy p;
  p.spin = spin;
  auto loop = EventLoop::Create(p, env);
  EXPECT_TRUE(loop.ok()) << loop.status().ToString();
  return std::move(loop).value();
}

TEST(EventLoopTest, TimersFireInDeadlineOrderAndNeverEarly) {
  for (bool spin : {true, false}) {
    auto loop = MakeLoop(spin);
    std::vector<int> order;
    std::vector<TimeNs> lateness;
    TimeNs base = MonotonicNow();
    // Scheduled out of order; equal deadlines fire in scheduling order.
    const TimeNs offsets[] = {3 * kNsPerMs, 1 * kNsPerMs, 2 * kNsPerMs, 2 * kNsPerMs, 300 * kNsPerUs};
    for (int i = 0; i < 5; ++i) {
      TimeNs deadline = base + offsets[i];
      loop->RunAt(deadline, [&, i, deadline] {
        order.push_back(i);
        lateness.push_back(MonotonicNow() - deadline);
        if (order.size() == 5) loop->Quit();
      });
    }
    loop->Run();
    EXPECT_EQ(order, (std::vector<int>{4, 1, 2, 3, 0})) << "spin=" << spin;
    for (TimeNs l : lateness) EXPECT_GE(l, 0);
  }
}

// A housekeeping timer fires when due (never early); one fired late (the loop was busy) is
// not a late timer, where a precise one is.
TEST(EventLoopTest, CoarseTimersFireWithoutSpinningOrCountingAsLate) {
  auto loop = MakeLoop(true);
  const TimeNs deadline = MonotonicNow() + 2 * kNsPerMs;
  TimeNs fired = 0;
  loop->RunAtCoarse(deadline, [&] {
    fired = MonotonicNow();
    loop->Quit();
  });
  loop->Run();
  EXPECT_GE(fired, deadline);
  loop->ResetQuit();
  loop->RunAtCoarse(MonotonicNow(), [&] { loop->Quit(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // due long ago when it runs
  loop->Run();
  EXPECT_EQ(loop->late_timers(), 0u);
  // A precise one as late is counted.
  loop->ResetQuit();
  loop->RunAt(MonotonicNow(), [&] { loop->Quit(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  loop->Run();
  EXPECT_EQ(loop->late_timers(), 1u);
}

// On a manual clock, timers fire exactly when the test moves time past them, in deadline
// order (scheduling order for equal deadlines), and Now() inside each is the advanced time.
TEST(EventLoopTest, ManualEnvFiresTimersInOrderAsTheTestAdvancesIt) {
  env::ManualEnv env(1000 * kNsPerSec);
  auto loop = MakeLoop(/*spin=*/true, &env);  // spinning is turned off on a manual clock
  EXPECT_FALSE(loop->policy().spin);
  const TimeNs base = loop->Now();
  std::vector<std::pair<int, TimeNs>> fired;  // (which, Now() when it ran)
  const TimeNs offsets[] = {3 * kNsPerMs, 1 * kNsPerMs, 2 * kNsPerMs, 2 * kNsPerMs};
  for (int i = 0; i < 4; ++i) {
    loop->RunAt(base + offsets[i], [&, i] { fired.emplace_back(i, loop->Now()); });
  }
  loop->RunOnce(loop->Now());
  EXPECT_TRUE(fired.empty());  // nothing is due until time moves
  env.Advance(kNsPerMs - 1);
  loop->RunOnce(loop->Now());
  EXPECT_TRUE(fired.empty());
  env.Advance(1);
  loop->RunOnce(loop->Now());
  EXPECT_EQ(fired, (std::vector<std::pair<int, TimeNs>>{{1, base + kNsPerMs}}));
  env.Advance(5 * kNsPerMs);
  loop->RunOnce(loop->Now());
  EXPECT_EQ(fired, (std::vector<std::pair<int, TimeNs>>{{1, base + kNsPerMs},
                                                        {2, base + 6 * kNsPerMs},
                                                        {3, base + 6 * kNsPerMs},
                                                        {0, base + 6 * kNsPerMs}}));
  EXPECT_EQ(loop->late_timers(), 3u);  // fired 3-5 ms after their deadlines: counted late
}

// Run() blocks on the Env's timer; another thread moving the manual clock wakes it.
TEST(EventLoopTest, AdvancingAManualEnvFromAnotherThreadWakesARunningLoop) {
  env::ManualEnv env;
  auto loop = MakeLoop(true, &env);
  TimeNs ran_at = -1;
  loop->RunAfter(kNsPerSec, [&] {
    ran_at = loop->Now();
    loop->Quit();
  });
  std::thread t([&] { env.Advance(kNsPerSec); });
  loop->Run();  // returns only once the timer fired
  t.join();
  EXPECT_EQ(ran_at, kNsPerSec);
}

TEST(EventLoopTest, CancelledTimerNeverRuns) {
  env::ManualEnv env;
  auto loop = MakeLoop(true, &env);
  bool ran = false, later_ran = false;
  auto id = loop->RunAfter(kNsPerMs, [&] { ran = true; });
  loop->RunAfter(2 * kNsPerMs, [&] { later_ran = true; });
  loop->Cancel(id);
  env.Advance(2 * kNsPerMs);
  loop->RunOnce(loop->Now());
  EXPECT_FALSE(ran);
  EXPECT_TRUE(later_ran);
}

// A clock that jumps forward (a stalled VM) makes every timer it passed due at once; they run
// in order and count as late.
TEST(EventLoopTest, AClockJumpFiresThePassedTimersInOrderAndCountsThemLate) {
  env::ManualEnv manual;
  env::FaultyEnv env(&manual);
  auto loop = MakeLoop(true, &env);
  std::vector<int> order;
  loop->RunAfter(20 * kNsPerSec, [&] { order.push_back(2); });
  loop->RunAfter(10 * kNsPerSec, [&] { order.push_back(1); });
  loop->RunAfter(60 * kNsPerSec, [&] { order.push_back(3); });
  env.JumpClock(30 * kNsPerSec);
  loop->RunOnce(loop->Now());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_EQ(loop->late_timers(), 2u);
}

TEST(EventLoopTest, PostRunsLaterNotReentrantly) {
  auto loop = MakeLoop();
  std::vector<int> seq;
  loop->Post([&] {
    seq.push_back(1);
    loop->Post([&] {
      seq.push_back(3);
      loop->Quit();
    });
    seq.push_back(2);  // the nested Post has not run yet
  });
  loop->Run();
  EXPECT_EQ(seq, (std::vector<int>{1, 2, 3}));
}

TEST(EventLoopTest, FdHandlerSeesDataAndMayRemoveItself) {
  auto loop = MakeLoop();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  std::string got;
  ASSERT_TRUE(loop->AddFd(p[0], EPOLLIN, [&](uint32_t ev) {
                    EXPECT_TRUE(ev & EPOLLIN);
                    char buf[16];
                    ssize_t n = read(p[0], buf, sizeof(buf));
                    got.append(buf, static_cast<size_t>(n));
                    loop->RemoveFd(p[0]);
                    loop->Quit();
                  }).ok());
  loop->RunAfter(kNsPerMs, [&] { ASSERT_EQ(write(p[1], "hi", 2), 2); });
  loop->Run();
  EXPECT_EQ(got, "hi");
  close(p[0]);
  close(p[1]);
}

TEST(EventLoopTest, QuitFromAnotherThreadWakesABlockedLoop) {
  auto loop = MakeLoop();
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    loop->Quit();
  });
  loop->Run();  // nothing scheduled: only Quit can end this
  t.join();
  EXPECT_TRUE(loop->quitting());
}

TEST(PreciseSleepTest, SleepUntilNeverReturnsEarly) {
  SetMinimalTimerSlack();
  for (bool spin : {true, false}) {
    SleepPolicy p;
    p.spin = spin;
    for (TimeNs d : {TimeNs{50'000}, TimeNs{500'000}, TimeNs{2'000'000}}) {
      TimeNs deadline = MonotonicNow() + d;
      SleepUntil(deadline, p);
      EXPECT_GE(MonotonicNow(), deadline);
    }
  }
}

TEST(PreciseSleepTest, DefaultPolicySpinsOnlyWhenRanksFitOnCores) {
  int cores = UsableCores();
  EXPECT_TRUE(DefaultSleepPolicy(cores).spin);
  EXPECT_FALSE(DefaultSleepPolicy(cores + 1).spin);
  EXPECT_FALSE(DefaultSleepPolicy(1, -1).spin);
  SleepPolicy forced = DefaultSleepPolicy(cores + 8, 50);
  EXPECT_TRUE(forced.spin);
  EXPECT_EQ(forced.margin, 50 * kNsPerUs);
}

}  // namespace
}  // namespace genie::loop
