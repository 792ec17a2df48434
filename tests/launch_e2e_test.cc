// genie launch end to end: real processes, real sockets on loopback, real signals.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>

#include "tests/support/cli.h"
#include "tests/support/process.h"

namespace {

using genie::testing::Child;

const std::string kGenie = GENIE_BINARY_DIR "/tools/genie/genie";

// A command's exit code and its output (stderr merged), run by the one test helper.
struct Outcome {
  int code;
  std::string output;
};

Outcome Sh(const std::string& cmd) {
  genie::testing::CliResult r = genie::testing::RunCli(cmd);
  return {r.exit_code, r.output};
}

// Waits for a background command; kills it when it runs longer than a generous `timeout_s`
// (the point is that it ends, not how fast).
Outcome Finish(const Child& child, double timeout_s) {
  auto code = genie::testing::WaitExit(child, timeout_s);
  if (!code) {
    genie::testing::Signal(child, SIGKILL);
    genie::testing::WaitExit(child, 10);
  }
  return {code.value_or(-1), genie::testing::ReadLog(child)};
}

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
  const std::string dir = genie::testing::FreshDir("launch-sigterm");
  // exec: the shell becomes the launcher, so the child's pid is the launcher's.
  Child launcher =
      genie::testing::Spawn("exec " + kGenie + " launch -n 2 --exec -- sleep 60", dir + "/log");
  ASSERT_GT(launcher.pid, 0);
  // Signal once both ranks run, so there is something to forward the signal to.
  for (int i = 0; i < 3000 && genie::testing::CountChildren(launcher.pid) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(genie::testing::CountChildren(launcher.pid), 2) << genie::testing::ReadLog(launcher);
  kill(launcher.pid, SIGTERM);
  // Ends only once the launcher exited; it waits for its ranks, which sleep for 60 s unless
  // the signal reached them.
  Outcome r = Finish(launcher, 50);
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
}

// No launcher: the environment torchrun would set, by hand; addresses meet in rank 0's store.
TEST(LaunchE2eTest, TorchrunStyleEnvironmentWithStoreOnRankZero) {
  std::string common =
      "env -u GENIE_RANK -u GENIE_RENDEZVOUS WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=" +
      std::to_string(genie::testing::FreeTcpPort()) + " ";
  const std::string dir = genie::testing::FreshDir("launch-torchrun");
  Child ranks[3];
  for (int r = 0; r < 3; ++r) {
    ranks[r] = genie::testing::Spawn(common + "RANK=" + std::to_string(r) +
                                         " LOCAL_RANK=" + std::to_string(r) + " " + kGenie +
                                         " netcheck --iters 2 --bytes 64KiB --channels 2",
                                     dir + "/rank" + std::to_string(r) + ".log");
  }
  for (int r = 0; r < 3; ++r) {
    Outcome out = Finish(ranks[r], 120);
    EXPECT_EQ(out.code, 0) << out.output;
    EXPECT_NE(out.output.find("netcheck rank " + std::to_string(r) + "/3"), std::string::npos)
        << out.output;
    EXPECT_NE(out.output.find("connections per peer: 2 2,"), std::string::npos) << out.output;
  }
}

}  // namespace
