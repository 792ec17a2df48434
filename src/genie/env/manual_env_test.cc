// ManualEnv: a clock that moves only by hand, timers that fire as it passes them, files in
// memory, scripted children.
#include "genie/env/manual_env.h"

#include <poll.h>
#include <signal.h>

#include <map>
#include <thread>

#include <gtest/gtest.h>

namespace genie::env {
namespace {

ProcessSpec Named(std::string program) {
  ProcessSpec spec;
  spec.argv = {std::move(program)};
  return spec;
}

bool Readable(const Timer& t) {
  pollfd p{t.fd(), POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

TEST(ManualEnvTest, ClockMovesOnlyWhenAdvancedAndNeverBack) {
  ManualEnv env(5);
  EXPECT_EQ(env.Now(), 5);
  EXPECT_FALSE(env.ClockMovesByItself());
  env.Advance(10);
  EXPECT_EQ(env.Now(), 15);
  env.Advance(-3);  // ignored
  EXPECT_EQ(env.Now(), 15);
  env.SleepFor(kNsPerSec);  // a sleep is an advance
  EXPECT_EQ(env.Now(), 15 + kNsPerSec);
}

TEST(ManualEnvTest, TimersBecomeReadableInDeadlineOrderAsTimeAdvances) {
  ManualEnv env;
  auto early = env.NewTimer(), late = env.NewTimer();
  ASSERT_TRUE(early.ok() && late.ok());
  (*late)->ArmAt(3 * kNsPerMs);
  (*early)->ArmAt(1 * kNsPerMs);
  EXPECT_FALSE(Readable(**early));
  env.Advance(kNsPerMs - 1);
  EXPECT_FALSE(Readable(**early));
  env.Advance(1);
  EXPECT_TRUE(Readable(**early));
  EXPECT_FALSE(Readable(**late));
  (*early)->Clear();
  EXPECT_FALSE(Readable(**early));
  env.Advance(5 * kNsPerMs);
  EXPECT_TRUE(Readable(**late));
  (*early)->ArmAt(env.Now());  // already due: readable at once
  EXPECT_TRUE(Readable(**early));
}

TEST(ManualEnvTest, AnotherThreadAdvancingWakesAPoller) {
  ManualEnv env;
  auto timer = env.NewTimer();
  ASSERT_TRUE(timer.ok());
  (*timer)->ArmAt(kNsPerSec);
  std::thread t([&] { env.Advance(kNsPerSec); });
  pollfd p{(*timer)->fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 10'000), 1);
  t.join();
}

TEST(ManualEnvTest, FilesLiveInMemory) {
  ManualEnv env;
  auto dir = env.CreateTempDir("x_");
  ASSERT_TRUE(dir.ok());
  EXPECT_EQ(*dir, "/tmp/x_000000");
  EXPECT_EQ(env.WriteFile("/nowhere/f", "a").code(), Status::Code::kNotFound);
  EXPECT_EQ(env.CreateDir(*dir + "/a/b").code(), Status::Code::kNotFound);  // no parent
  ASSERT_TRUE(env.CreateDirs(*dir + "/a/b/").ok());
  ASSERT_TRUE(env.CreateDir(*dir + "/a/b").ok());  // existing is fine
  ASSERT_TRUE(env.WriteFileAtomically(*dir + "/a/b/f", "data").ok());
  EXPECT_EQ(*env.ReadFile(*dir + "/a/./b/f"), "data");
  EXPECT_FALSE(env.FileExists(*dir + "/a/b/.f.1.tmp"));
  auto w = env.NewWritableFile(*dir + "/a/b/f");  // truncates
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*env.ReadFile(*dir + "/a/b/f"), "");
  ASSERT_TRUE((*w)->Append("xy").ok());
  EXPECT_EQ(*env.ReadFile(*dir + "/a/b/f"), "xy");
  ASSERT_TRUE(env.RemoveAll(*dir + "/a").ok());
  EXPECT_FALSE(env.FileExists(*dir + "/a/b/f"));
  EXPECT_FALSE(env.FileExists(*dir + "/a"));
  EXPECT_TRUE(env.FileExists(*dir));
  EXPECT_EQ(env.ReadFile(*dir + "/a/b/f").status().code(), Status::Code::kNotFound);
}

TEST(ManualEnvTest, EnvironmentVariablesAreTheTestsOwn) {
  ManualEnv env;
  EXPECT_FALSE(env.GetEnv("HOME").has_value());
  env.SetEnv("GENIE_RANK", "3");
  EXPECT_EQ(env.GetEnv("GENIE_RANK"), "3");
}

// Wait() jumps the clock to the next scripted event, so a supervisor's timing is exact.
TEST(ManualEnvTest, ScriptedChildrenEndWhenTheirScriptSays) {
  ManualEnv env;
  env.SetScripter([](const ProcessSpec& spec) {
    if (spec.argv[0] == "quick") return ProcessScript{2 * kNsPerSec, ExitedWith(3)};
    return ProcessScript{-1, 0, /*ignores_sigterm=*/spec.argv[0] == "ignores-term"};
  });
  auto group = env.NewProcessGroup();
  ASSERT_TRUE(group.ok());
  const int quick = *(*group)->Spawn(Named("quick"));
  const int forever = *(*group)->Spawn(Named("forever"));
  const int deaf = *(*group)->Spawn(Named("ignores-term"));
  ProcessEvent e = (*group)->Wait(kNsPerSec);
  EXPECT_EQ(e.kind, ProcessEvent::Kind::kTimeout);
  EXPECT_EQ(env.Now(), kNsPerSec);
  e = (*group)->Wait(-1);
  ASSERT_EQ(e.kind, ProcessEvent::Kind::kExited);
  EXPECT_EQ(e.exited, (std::vector<std::pair<int, int>>{{quick, ExitedWith(3)}}));
  EXPECT_EQ(env.Now(), 2 * kNsPerSec);
  (*group)->Signal(forever, SIGTERM);
  (*group)->Signal(deaf, SIGTERM);  // ignored
  e = (*group)->Wait(-1);
  EXPECT_EQ(e.exited, (std::vector<std::pair<int, int>>{{forever, KilledBy(SIGTERM)}}));
  env.SignalAt(5 * kNsPerSec, SIGINT);
  e = (*group)->Wait(-1);
  EXPECT_EQ(e.kind, ProcessEvent::Kind::kSignal);
  EXPECT_EQ(e.signal, SIGINT);
  EXPECT_EQ(env.Now(), 5 * kNsPerSec);
  (*group)->Signal(deaf, SIGKILL);
  e = (*group)->Wait(-1);
  EXPECT_EQ(e.exited, (std::vector<std::pair<int, int>>{{deaf, KilledBy(SIGKILL)}}));
  EXPECT_EQ(env.spawned().size(), 3u);
  EXPECT_EQ(env.signals_sent().size(), 3u);
}

}  // namespace
}  // namespace genie::env
