// A launcher killed by SIGKILL takes its ranks with it. The test process is made a child
// subreaper, so the orphaned ranks come back to it (not to a PID 1 that may never reap them)
// and their deaths can be waited for exactly.
#include "genie/launch/launch_guardian.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "genie/launch/local_launcher.h"
#include "tests/support/temp_dir.h"

namespace genie::launch {
namespace {

using ::genie::testing::TempDir;

using Clock = std::chrono::steady_clock;

class LaunchGuardianTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  }
  void TearDown() override {
    prctl(PR_SET_CHILD_SUBREAPER, 0);
  }

  // Forks a launcher of `ranks` ranks running `script` (each first writes its pid), waits until
  // every rank has started, and returns the launcher's pid and the ranks'.
  pid_t StartLauncher(int ranks, const std::string& script, TimeNs grace,
                      std::set<pid_t>* rank_pids) {
    const pid_t launcher = fork();
    if (launcher == 0) {
      LaunchOptions o;
      o.ranks = ranks;
      o.grace = grace;
      o.argv = {"/bin/sh", "-c", "echo $$ > " + dir_ + "/pid.$GENIE_RANK; " + script};
      auto r = RunLocalRanks(o);
      _exit(r.ok() ? r->exit_code : 99);
    }
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (rank_pids->size() < static_cast<size_t>(ranks) && Clock::now() < deadline) {
      rank_pids->clear();
      for (int r = 0; r < ranks; ++r) {
        std::ifstream in(dir_ + "/pid." + std::to_string(r));
        pid_t pid = 0;
        if (in >> pid && pid > 0) rank_pids->insert(pid);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return launcher;
  }

  // Reaps children (the launcher, then its orphans) until every pid in `pids` is gone or
  // `timeout` passes; returns those still alive and how each that died ended.
  std::set<pid_t> WaitGone(std::set<pid_t> pids, std::chrono::milliseconds timeout,
                           std::map<pid_t, int>* how) {
    const auto deadline = Clock::now() + timeout;
    while (!pids.empty() && Clock::now() < deadline) {
      int status = 0;
      const pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        if (pids.erase(pid) > 0) (*how)[pid] = status;
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pids;
  }

  // Every child and orphan gone (the guardians exit once their ranks have), within 5 s.
  void ReapAll() {
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
      const pid_t pid = waitpid(-1, nullptr, WNOHANG);
      if (pid < 0 && errno == ECHILD) return;
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  TempDir tmp_{"launch-guardian"};
  std::string dir_ = tmp_.path();
};

TEST_F(LaunchGuardianTest, RanksDieWithALauncherKilledBySigkill) {
  std::set<pid_t> ranks;
  const pid_t launcher = StartLauncher(4, "exec sleep 60", 5 * kNsPerSec, &ranks);
  ASSERT_EQ(ranks.size(), 4u) << "the ranks did not start";
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  std::map<pid_t, int> how;
  ranks.insert(launcher);
  const auto left = WaitGone(ranks, std::chrono::seconds(3), &how);
  for (pid_t p : left) kill(p, SIGKILL);
  ReapAll();
  ASSERT_TRUE(left.empty()) << left.size() - 1 << " rank(s) outlived their launcher";
  for (const auto& [pid, status] : how) {
    if (pid == launcher) continue;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "rank " << pid;
  }
}

// A program that ignores SIGTERM (--exec can run anything) is killed after the grace period by
// the guardian: the parent-death signal alone would leave it running.
TEST_F(LaunchGuardianTest, RanksIgnoringSigtermAreKilledAfterTheGrace) {
  std::set<pid_t> ranks;
  const pid_t launcher = StartLauncher(3, "trap '' TERM; exec sleep 60", kNsPerSec / 2, &ranks);
  ASSERT_EQ(ranks.size(), 3u) << "the ranks did not start";
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  std::map<pid_t, int> how;
  ranks.insert(launcher);
  const auto left = WaitGone(ranks, std::chrono::seconds(5), &how);
  for (pid_t p : left) kill(p, SIGKILL);
  ReapAll();
  ASSERT_TRUE(left.empty()) << left.size() << " process(es) outlived the launcher";
  for (const auto& [pid, status] : how) {
    if (pid == launcher) continue;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "rank " << pid;
  }
}

// A launcher that returns normally leaves nothing behind and its guardian touches nothing.
TEST_F(LaunchGuardianTest, ANormalLaunchEndsItsGuardian) {
  LaunchOptions o;
  o.ranks = 2;
  o.argv = {"/bin/sh", "-c", "exit 0"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1) << "a child of the launcher is still there";
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace genie::launch
