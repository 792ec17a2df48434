// genie launch end to end: real processes, real sockets on loopback, real signals.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/temp_dir.h"

namespace {

using genie::testing::Child;

const std::string kGenie = genie::testing::GenieBinary();

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
  Outcome r = Sh(kGenie +
                 " launch -n 3 --exec -- /bin/sh -c 'if [ $GENIE_RANK = 1 ]; then exit 3; "
                 "fi; exec " +
                 kGenie + " netcheck --iters 1000 --peer-timeout 3s'");
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
  // Signal once both ranks run, so there is something to forward the signal to. The launcher's
  // children: the two ranks and, once they are started, its guardian (launch_guardian.h).
  for (int i = 0; i < 3000 && genie::testing::CountChildren(launcher.pid) < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(genie::testing::CountChildren(launcher.pid), 3) << genie::testing::ReadLog(launcher);
  kill(launcher.pid, SIGTERM);
  // Ends only once the launcher exited; it waits for its ranks, which sleep for 60 s unless
  // the signal reached them.
  Outcome r = Finish(launcher, 50);
  EXPECT_EQ(r.code, 128 + SIGTERM) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
}

// True once `pid` runs genie and SIGINT has its default action: genie's main() restored it
// (/proc/PID/status: "Name:", and bit SIGINT - 1 clear in both "SigIgn:" and "SigCgt:"). A
// library's constructor (libfabric's) catches SIGINT before main() runs: not ignored, but not
// yet genie's either.
bool RunsGenieWithSigintRestored(pid_t pid) {
  const std::string status = genie::testing::ReadFile("/proc/" + std::to_string(pid) + "/status");
  const size_t name = status.find("Name:\tgenie\n");
  if (name == std::string::npos) return false;
  for (const char* field : {"SigIgn:\t", "SigCgt:\t"}) {
    const size_t at = status.find(field);
    if (at == std::string::npos) return false;
    const unsigned long long mask = std::stoull(status.substr(at + 8, 16), nullptr, 16);
    if (mask & (1ull << (SIGINT - 1))) return false;
  }
  return true;
}

// Starts `command` with SIGINT ignored (as a shell's background job or nohup leaves it),
// exec'd so that the child's pid is the command's, and waits until genie runs (it restored
// SIGINT) with `children` processes of its own (ranks). No fixed delay: under ASan genie took
// seconds to reach main() on a busy machine, and a SIGINT before that is rightly ignored.
Child StartIgnoringSigint(const std::string& command, const std::string& name, int children) {
  const std::string dir = genie::testing::FreshDir(name);
  Child child = genie::testing::Spawn("trap '' INT; exec " + command, dir + "/log");
  for (int i = 0; i < 6000; ++i) {
    if (RunsGenieWithSigintRestored(child.pid) &&
        genie::testing::CountChildren(child.pid) >= children) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return child;
}

// The launcher forwards SIGINT; ranks that inherited it ignored must stop on it all the same,
// not keep measuring until the grace period's SIGKILL.
TEST(LaunchE2eTest, SigintStopsRanksThatInheritedItIgnored) {
  // Its children: the two ranks and the launch guardian (launch_guardian.h).
  Child launcher = StartIgnoringSigint(kGenie + " launch -n 2 --grace 30s --exec -- sleep 60",
                                       "launch-sigint-ignored", 3);
  ASSERT_GT(launcher.pid, 0);
  ASSERT_TRUE(RunsGenieWithSigintRestored(launcher.pid)) << genie::testing::ReadLog(launcher);
  ASSERT_EQ(genie::testing::CountChildren(launcher.pid), 3) << genie::testing::ReadLog(launcher);
  const double start = genie::testing::NowSeconds();
  kill(launcher.pid, SIGINT);
  Outcome r = Finish(launcher, 50);
  EXPECT_LT(genie::testing::NowSeconds() - start, 10.0) << r.output;
  EXPECT_EQ(r.code, 128 + SIGINT) << r.output;
  EXPECT_NE(r.output.find("interrupted"), std::string::npos) << r.output;
}

// A rank started by another launcher (here: by hand) with SIGINT ignored stops on it too.
TEST(LaunchE2eTest, ARankThatInheritedSigintIgnoredStillStopsOnIt) {
  Child rank = StartIgnoringSigint(
      "env -u GENIE_RANK -u GENIE_RENDEZVOUS RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 "
      "MASTER_PORT=" +
          std::to_string(genie::testing::FreeTcpPort()) + " " + kGenie +
          " netcheck --peer-timeout 60s",
      "rank-sigint-ignored", 0);
  ASSERT_GT(rank.pid, 0);
  ASSERT_TRUE(RunsGenieWithSigintRestored(rank.pid)) << genie::testing::ReadLog(rank);
  const double start = genie::testing::NowSeconds();
  kill(rank.pid, SIGINT);  // it waits for rank 1 in the rendezvous, which never comes
  Outcome r = Finish(rank, 80);
  EXPECT_LT(genie::testing::NowSeconds() - start, 10.0) << r.output;
  EXPECT_EQ(r.code, 128 + SIGINT) << r.output;
}

// A rank exits 75 (it lost a peer) before the rank that failed has exited: genie launch returns
// the failing rank's code and names it.
TEST(LaunchE2eTest, TheExitCodeIsTheCausesNotAWitnesss) {
  Outcome r = Sh(kGenie +
                 " launch -n 3 --exec -- sh -c 'if [ $GENIE_RANK = 1 ]; then exit 75; fi; "
                 "if [ $GENIE_RANK = 2 ]; then sleep 0.5; exit 4; fi; exec sleep 60'");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("genie launch: rank 2 failed: exit code 4"), std::string::npos)
      << r.output;
}

// Two jobs started torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR/MASTER_PORT by hand) with the
// same port, and so the same derived job id. Job B starts while job A's rank 1 is not up yet:
// B's rank 0 finds the port taken, B's rank 1 would fill A's missing rank. Neither job may
// complete with the other's rank: the second rank 0 stops the exchange, every rank says why.
TEST(LaunchE2eTest, TwoJobsOnOneMasterPortNeverMix) {
  const std::string dir = genie::testing::FreshDir("two-jobs");
  const std::string port = std::to_string(genie::testing::FreeTcpPort());
  auto job = [&](double rank1_delay_s) {
    const std::string env =
        "env -u GENIE_RANK -u GENIE_RENDEZVOUS -u GENIE_LAUNCH_NONCE "
        "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
        port;
    const std::string rank = " " + kGenie + " netcheck --iters 2 --bytes 64KiB --peer-timeout 3s";
    return genie::testing::Spawn(env + " RANK=0" + rank + " & p=$!; sleep " +
                                     std::to_string(rank1_delay_s) + "; " + env + " RANK=1" + rank +
                                     "; r1=$?; wait $p; r0=$?; echo job codes $r0 $r1; "
                                     "[ $r0 = 0 ] && [ $r1 = 0 ]",
                                 dir + "/job" + std::to_string(rank1_delay_s) + ".log");
  };
  Child a = job(1.5);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // A's rank 0 serves the store
  Child b = job(0.4);
  Outcome ra = Finish(a, 60), rb = Finish(b, 60);
  EXPECT_NE(ra.code, 0) << ra.output;
  EXPECT_NE(rb.code, 0) << rb.output;
  EXPECT_EQ(ra.output.find("netcheck rank"), std::string::npos) << ra.output;
  EXPECT_EQ(rb.output.find("netcheck rank"), std::string::npos) << rb.output;
  EXPECT_NE(ra.output.find("two jobs use the rendezvous store on 127.0.0.1:" + port),
            std::string::npos)
      << ra.output;
  EXPECT_NE(rb.output.find("another job's store is probably there"), std::string::npos)
      << rb.output;
}

// genie launch's nonce tells the launches apart: a stray of another launch among rank 0's own
// ranks is refused alone, named, and the job completes (here the nonces are set by hand, as
// the docs allow for ranks a script starts).
TEST(LaunchE2eTest, AStrayOfAnotherLaunchIsRefusedAndTheJobCompletes) {
  const std::string port = std::to_string(genie::testing::FreeTcpPort());
  const std::string dir = genie::testing::FreshDir("stray-launch");
  auto rank = [&](int r, const std::string& nonce) {
    return genie::testing::Spawn(
        "env -u GENIE_RANK -u GENIE_RENDEZVOUS GENIE_LAUNCH_NONCE=" + nonce +
            " WORLD_SIZE=2 LOCAL_RANK=" + std::to_string(r) +
            " LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port +
            " RANK=" + std::to_string(r) + " " + kGenie +
            " netcheck --iters 2 --bytes 64KiB --peer-timeout 5s",
        dir + "/" + std::to_string(r) + nonce + ".log");
  };
  Child a0 = rank(0, "aaaa");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  Outcome stray = Finish(rank(1, "bbbb"), 60);
  Child a1 = rank(1, "aaaa");
  Outcome r0 = Finish(a0, 60), r1 = Finish(a1, 60);
  EXPECT_EQ(r0.code, 0) << r0.output;
  EXPECT_EQ(r1.code, 0) << r1.output;
  EXPECT_EQ(stray.code, 2) << stray.output;
  EXPECT_NE(stray.output.find("rank 1 was started by another launch (nonce bbbb) than ranks "
                              "0..1 of this job (nonce aaaa)"),
            std::string::npos)
      << stray.output;
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
