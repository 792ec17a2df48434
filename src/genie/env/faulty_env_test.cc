// FaultyEnv: each injected failure surfaces as a clear Status (or a killed child, a jumped
// clock), and everything else passes through.
#include "genie/env/faulty_env.h"

#include <poll.h>
#include <signal.h>

#include <gtest/gtest.h>

#include "genie/env/manual_env.h"

namespace genie::env {
namespace {

ProcessSpec Named(std::string program) {
  ProcessSpec spec;
  spec.argv = {std::move(program)};
  return spec;
}

TEST(FaultyEnvTest, ReadOnlyFileSystemSurfacesAsEROFS) {
  ManualEnv base;
  FaultyEnv env(&base);
  ASSERT_TRUE(env.CreateDirs("/out/run").ok());
  auto open = env.NewWritableFile("/out/run/rank-0.jsonl");
  ASSERT_TRUE(open.ok());
  ASSERT_TRUE((*open)->Append("before\n").ok());
  env.SetReadOnly("/out");
  Status st = (*open)->Append("after\n");  // also through a file opened before
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message(), "Read-only file system");
  st = env.WriteFileAtomically("/out/run/summary.json", "{}");
  EXPECT_EQ(st.message(), "Read-only file system") << st.ToString();
  EXPECT_FALSE(env.FileExists("/out/run/summary.json"));
  EXPECT_EQ(env.CreateDirs("/out/other").message(), "Read-only file system");
  EXPECT_EQ(*env.ReadFile("/out/run/rank-0.jsonl"), "before\n");  // reads still work
  EXPECT_TRUE(env.WriteFile("/tmp/elsewhere", "ok").ok());       // other paths too
  env.ClearFaults();
  EXPECT_TRUE(env.WriteFile("/out/run/summary.json", "{}").ok());
}

TEST(FaultyEnvTest, DiskFullAfterABudgetSurfacesAsENOSPC) {
  ManualEnv base;
  FaultyEnv env(&base);
  env.SetDiskFull("/tmp", 10);
  auto f = env.NewWritableFile("/tmp/f");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE((*f)->Append("123456").ok());
  Status st = (*f)->Append("7890ab");
  EXPECT_EQ(st.message(), "No space left on device");
  EXPECT_TRUE((*f)->Append("7890").ok());  // what still fits
  EXPECT_EQ(*env.ReadFile("/tmp/f"), "1234567890");
}

TEST(FaultyEnvTest, SpawnsFailAfterSomeSucceed) {
  ManualEnv base;
  FaultyEnv env(&base);
  env.FailSpawnsAfter(2, EAGAIN);
  auto group = env.NewProcessGroup();
  ASSERT_TRUE(group.ok());
  EXPECT_TRUE((*group)->Spawn(Named("a")).ok());
  EXPECT_TRUE((*group)->Spawn(Named("b")).ok());
  auto third = (*group)->Spawn(Named("c"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().message(), "Resource temporarily unavailable");
  EXPECT_EQ(base.spawned().size(), 2u);
}

TEST(FaultyEnvTest, AChildIsKilledOnSchedule) {
  ManualEnv base;
  base.SetScripter([](const ProcessSpec&) { return ProcessScript{-1, 0}; });
  FaultyEnv env(&base);
  env.KillChild(1, 3 * kNsPerSec, SIGKILL);
  auto group = env.NewProcessGroup();
  ASSERT_TRUE(group.ok());
  const int first = *(*group)->Spawn(Named("a"));
  const int second = *(*group)->Spawn(Named("b"));
  ProcessEvent e = (*group)->Wait(-1);
  ASSERT_EQ(e.kind, ProcessEvent::Kind::kExited);
  EXPECT_EQ(e.exited, (std::vector<std::pair<int, int>>{{second, KilledBy(SIGKILL)}}));
  EXPECT_EQ(env.Now(), 3 * kNsPerSec);
  (*group)->Signal(first, SIGTERM);
  EXPECT_EQ((*group)->Wait(-1).exited, (std::vector<std::pair<int, int>>{{first, KilledBy(SIGTERM)}}));
}

TEST(FaultyEnvTest, AJumpingClockMovesForwardOnlyAndTimersFollowTheWrappedClock) {
  ManualEnv base(100);
  FaultyEnv env(&base);
  env.JumpClock(5 * kNsPerSec);
  EXPECT_EQ(env.Now(), 100 + 5 * kNsPerSec);
  env.JumpClock(-kNsPerSec);  // ignored: monotonic
  EXPECT_EQ(env.Now(), 100 + 5 * kNsPerSec);
  auto t = env.NewTimer();
  ASSERT_TRUE(t.ok());
  (*t)->ArmAt(env.Now() + kNsPerMs);
  base.Advance(kNsPerMs);
  pollfd p{(*t)->fd(), POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1);
}

}  // namespace
}  // namespace genie::env
