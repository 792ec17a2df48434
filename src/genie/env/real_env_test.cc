// RealEnv against the OS itself: files in a fresh temporary directory, a timerfd timer, a real
// child process, the process environment.
#include "genie/env/real_env.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <map>

#include <gtest/gtest.h>

namespace genie::env {
namespace {

TEST(RealEnvTest, FilesRoundTripInATempDir) {
  Env* env = Env::Default();
  EXPECT_EQ(env, Env::Default());
  auto dir = env->CreateTempDir("genie_env_test_");
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  ASSERT_TRUE(env->FileExists(*dir));
  const std::string sub = *dir + "/a/b";
  EXPECT_EQ(env->CreateDir(sub).code(), Status::Code::kNotFound);  // its parent is missing
  ASSERT_TRUE(env->CreateDirs(sub).ok());
  ASSERT_TRUE(env->CreateDirs(sub).ok());  // existing is fine
  ASSERT_TRUE(env->CreateDir(sub).ok());
  const std::string f = sub + "/x.txt";
  ASSERT_TRUE(env->WriteFileAtomically(f, "hello\n").ok());
  auto text = env->ReadFile(f);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello\n");
  EXPECT_FALSE(env->FileExists(sub + "/.x.txt." + std::to_string(env->ProcessId()) + ".tmp"));

  auto w = env->NewWritableFile(sub + "/y");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("ab").ok());
  ASSERT_TRUE((*w)->Append("cd").ok());
  ASSERT_TRUE((*w)->Close().ok());
  ASSERT_TRUE(env->RenameFile(sub + "/y", sub + "/z").ok());
  EXPECT_EQ(*env->ReadFile(sub + "/z"), "abcd");
  EXPECT_EQ(env->ReadFile(sub + "/y").status().code(), Status::Code::kNotFound);
  ASSERT_TRUE(env->RemoveFile(sub + "/z").ok());
  EXPECT_EQ(env->RemoveFile(sub + "/z").code(), Status::Code::kNotFound);
  EXPECT_EQ(env->NewWritableFile(*dir + "/missing/f").status().code(), Status::Code::kNotFound);

  ASSERT_TRUE(env->RemoveAll(*dir).ok());
  EXPECT_FALSE(env->FileExists(*dir));
  EXPECT_TRUE(env->RemoveAll(*dir).ok());  // absent already
}

TEST(RealEnvTest, TimerFdFiresAtItsDeadlineNotBefore) {
  Env* env = Env::Default();
  auto timer = env->NewTimer();
  ASSERT_TRUE(timer.ok());
  const TimeNs deadline = env->Now() + 2 * kNsPerMs;
  (*timer)->ArmAt(deadline);
  pollfd p{(*timer)->fd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_GE(env->Now(), deadline);
  (*timer)->Clear();
  EXPECT_EQ(poll(&p, 1, 0), 0);  // consumed
}

TEST(RealEnvTest, EnvironmentVariables) {
  Env* env = Env::Default();
  EXPECT_FALSE(env->GetEnv("GENIE_ENV_TEST_UNSET_VARIABLE").has_value());
  env->SetEnv("GENIE_ENV_TEST_VAR", "v1");
  EXPECT_EQ(env->GetEnv("GENIE_ENV_TEST_VAR"), "v1");
}

// The real process group is the launcher's: one child exits by itself, one is stopped.
TEST(RealEnvTest, ProcessGroupReapsExitsAndDeliversSignals) {
  Env* env = Env::Default();
  auto group = env->NewProcessGroup();
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  auto quick = (*group)->Spawn({{"/bin/sh", "-c", "exit $CODE"}, {{"CODE", "3"}}, "", "t"});
  auto slow = (*group)->Spawn({{"/bin/sh", "-c", "exec sleep 60"}, {}, "", "t"});
  ASSERT_TRUE(quick.ok() && slow.ok());
  std::map<int, int> ended;
  bool signalled = false;
  while (ended.size() < 2) {
    ProcessEvent e = (*group)->Wait(env->Now() + 30 * kNsPerSec);
    ASSERT_NE(e.kind, ProcessEvent::Kind::kTimeout);
    for (auto [pid, status] : e.exited) ended[pid] = status;
    if (ended.count(*quick) && !signalled) {
      (*group)->Signal(*slow, SIGTERM);
      signalled = true;
    }
  }
  EXPECT_EQ(ended[*quick], ExitedWith(3));
  EXPECT_TRUE(WIFSIGNALED(ended[*slow]) && WTERMSIG(ended[*slow]) == SIGTERM);
  EXPECT_EQ(ended[*slow], KilledBy(SIGTERM));
  EXPECT_EQ((*group)->Wait(env->Now() + kNsPerMs).kind, ProcessEvent::Kind::kTimeout);
}

}  // namespace
}  // namespace genie::env
