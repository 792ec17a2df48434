// genie launch end to end: real processes, real sockets on loopback, real signals.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>

#include "tests/support/process.h"

namespace {

const std::string kGenie = GENIE_BINARY_DIR "/tools/genie/genie";

struct Outcome {
  int code;
  std::string output;
};

FILE* Start(const std::string& cmd) { return popen((cmd + " 2>&1").c_str(), "r"); }

Outcome Finish(FILE* f) {
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out.append(buf, n);
  int status = pclose(f);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

Outcome Sh(const std::string& cmd) { return Finish(Start(cmd)); }

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(LaunchE2eTest, FourRanksFourChannelsExchangeVerifiedData) {
  Outcome r = Sh(kGenie + " launch -n 4 -- netcheck --channels 4 --iters 3 --bytes 256KiB");
  ASSERT_EQ(r.code, 0) << r.output;
  // Every rank saw exactly 4 connections to each of its 3 peers and no wrong word.
  EXPECT_EQ(Count(r.output, "0 wrong words, connections per peer: 4 4 4,"), 4) << r.output;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_NE(r.output.find("netcheck rank " + std::to_string(rank) + "/4"), std::string::npos);
  }
}

TEST(LaunchE2eTest, TwoRanks) {
  Outcome r = Sh(kGenie + " launch -n 2 -- netcheck --iters 2 --bytes 1MiB");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(Count(r.output, "0 wrong words, connections per peer: 1,"), 2) << r.output;
}

// Real processes: rank 1 is a process that fails (exit code 3) while the others run netcheck;
// the launcher names it and stops the job. (How the surviving ranks report a lost peer is
// covered without processes: RealBackendTest.ARankLostMidRunStopsEveryOtherRankNamingIt.)
TEST(LaunchE2eTest, AFailingRankStopsTheJobAndIsNamed) {
  Outcome r = Sh(kGenie + " launch -n 3 --exec -- /bin/sh -c 'if [ $GENIE_RANK = 1 ]; then exit 3; "
                 "fi; exec " + kGenie + " netcheck --iters 1000 --peer-timeout 3s'");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("genie launch: rank 1 failed: exit code 3"), std::string::npos)
      << r.output;
}

TEST(LaunchE2eTest, ForwardsSigtermAndExitsNonZero) {
  std::string pid_file = testing::TempDir() + "/genie_launch_pid." + std::to_string(getpid());
  std::remove(pid_file.c_str());  // never read a stale pid
  FILE* f = Start("sh -c 'echo $$ > " + pid_file + "; exec " + kGenie +
                  " launch -n 2 --exec -- sleep 60'");
  pid_t launcher = -1;
  for (int i = 0; i < 200 && launcher <= 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (FILE* p = fopen(pid_file.c_str(), "r")) {
      if (fscanf(p, "%d", &launcher) != 1) launcher = -1;
      fclose(p);
    }
  }
  ASSERT_GT(launcher, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let it start its ranks
  kill(launcher, SIGTERM);
  Outcome r = Finish(f);  // returns only once the launcher exited; it waits for its ranks
  std::remove(pid_file.c_str());
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
}

// No launcher: the environment torchrun would set, by hand; addresses meet in rank 0's store.
TEST(LaunchE2eTest, TorchrunStyleEnvironmentWithStoreOnRankZero) {
  std::string common =
      "env -u GENIE_RANK -u GENIE_RENDEZVOUS WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=" +
      std::to_string(genie::testing::FreeTcpPort()) + " ";
  FILE* ranks[3];
  for (int r = 0; r < 3; ++r) {
    ranks[r] = Start(common + "RANK=" + std::to_string(r) + " LOCAL_RANK=" + std::to_string(r) +
                     " " + kGenie + " netcheck --iters 2 --bytes 64KiB --channels 2");
  }
  for (int r = 0; r < 3; ++r) {
    Outcome out = Finish(ranks[r]);
    EXPECT_EQ(out.code, 0) << out.output;
    EXPECT_NE(out.output.find("netcheck rank " + std::to_string(r) + "/3"), std::string::npos)
        << out.output;
    EXPECT_NE(out.output.find("connections per peer: 2 2,"), std::string::npos) << out.output;
  }
}

}  // namespace
