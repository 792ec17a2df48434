// The launcher's rules — who is named, which code is returned, when the others are stopped and
// how — on a ManualEnv whose ranks are scripts: exact times, no sleeps, no real kills. Two
// tests keep real processes (what a rank sees in its environment; a program that cannot run);
// tests/e2e launches real genie ranks.
#include "genie/launch/local_launcher.h"

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "genie/env/faulty_env.h"
#include "genie/env/manual_env.h"
#include "tests/support/temp_dir.h"

namespace genie::launch {
namespace {

using ::genie::testing::TempDir;
using env::ExitedWith;
using env::KilledBy;
using env::ManualEnv;
using env::ProcessScript;
using env::ProcessSpec;

std::string Var(const ProcessSpec& spec, const std::string& name) {
  for (const auto& [k, v] : spec.env) {
    if (k == name) return v;
  }
  return "(unset)";
}

int RankOf(const ProcessSpec& spec) { return std::stoi(Var(spec, "GENIE_RANK")); }

// Ranks that run until stopped, except those given a script.
void Script(ManualEnv* env, std::map<int, ProcessScript> by_rank) {
  env->SetScripter([by_rank](const ProcessSpec& spec) {
    auto it = by_rank.find(RankOf(spec));
    return it != by_rank.end() ? it->second : ProcessScript{-1, 0};
  });
}

// (pid index, signal, time) of what the launcher sent, pids made 0-based in spawn order.
std::vector<std::tuple<int, int, TimeNs>> Sent(const ManualEnv& env) {
  std::vector<std::tuple<int, int, TimeNs>> out;
  for (const auto& s : env.signals_sent()) out.emplace_back(s.pid - 1000, s.signal, s.at);
  return out;
}

LaunchOptions Ranks(int n) {
  LaunchOptions o;
  o.ranks = n;
  o.argv = {"rank-program", "--flag"};
  return o;
}

TEST(LocalLauncherTest, EveryRankGetsItsEnvironment) {
  ManualEnv env;
  LaunchOptions o = Ranks(3);
  o.job_id = "jobX";
  o.rendezvous = "/shared/rdzv";
  o.sites = {{}, {"host1", {{"GENIE_BIND", "10.0.0.2"}}}};
  env.SetWallOffset(1'700'000'000'123'456'789);
  auto r = RunLocalRanks(o, &env);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->failed_rank, -1);
  const auto spawned = env.spawned();
  ASSERT_EQ(spawned.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ProcessSpec& s = spawned[static_cast<size_t>(i)];
    EXPECT_EQ(s.argv, o.argv);
    EXPECT_EQ(Var(s, "GENIE_RANK"), std::to_string(i));
    EXPECT_EQ(Var(s, "GENIE_WORLD_SIZE"), "3");
    EXPECT_EQ(Var(s, "GENIE_LOCAL_RANK"), std::to_string(i));
    EXPECT_EQ(Var(s, "GENIE_LOCAL_WORLD_SIZE"), "3");
    EXPECT_EQ(Var(s, "GENIE_RENDEZVOUS"), "dir:/shared/rdzv");
    EXPECT_EQ(Var(s, "GENIE_JOB_ID"), "jobX");
    EXPECT_EQ(Var(s, "GENIE_LAUNCH_TIME_NS"), "1700000000123456789");
    EXPECT_EQ(Var(s, "GENIE_LAUNCH_NONCE"), Var(spawned[0], "GENIE_LAUNCH_NONCE"));
    EXPECT_EQ(s.who, "genie launch: rank " + std::to_string(i));
  }
  EXPECT_EQ(spawned[1].netns, "host1");
  EXPECT_EQ(Var(spawned[1], "GENIE_BIND"), "10.0.0.2");
  EXPECT_EQ(Var(spawned[2], "GENIE_BIND"), "(unset)");
}

// The same through real processes: what a rank's program actually finds in its environment.
TEST(LocalLauncherTest, ARealRankSeesItsEnvironment) {
  const TempDir tmp("local-launcher");
  std::string dir = tmp.path();
  LaunchOptions o;
  o.ranks = 2;
  o.job_id = "jobX";
  o.rendezvous = dir + "/rdzv";
  o.argv = {"/bin/sh", "-c",
            "echo $GENIE_RANK $GENIE_WORLD_SIZE $GENIE_LOCAL_RANK $GENIE_RENDEZVOUS $GENIE_JOB_ID > " +
                dir + "/out.$GENIE_RANK"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  for (int i = 0; i < 2; ++i) {
    std::ifstream in(dir + "/out." + std::to_string(i));
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, std::to_string(i) + " 2 " + std::to_string(i) + " dir:" + dir + "/rdzv jobX");
  }
}

TEST(LocalLauncherTest, AFailingRankStopsTheOthersAndIsNamed) {
  ManualEnv env;
  Script(&env, {{2, {3 * kNsPerSec, ExitedWith(3)}}});
  auto r = RunLocalRanks(Ranks(4), &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->failed_rank, 2);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->message, "rank 2 failed: exit code 3; stopped the other 3 rank(s)");
  // The others are stopped the moment rank 2 is reaped, with SIGTERM, and go at once.
  EXPECT_EQ(Sent(env), (std::vector<std::tuple<int, int, TimeNs>>{
                           {0, SIGTERM, 3 * kNsPerSec},
                           {1, SIGTERM, 3 * kNsPerSec},
                           {3, SIGTERM, 3 * kNsPerSec}}));
  EXPECT_EQ(env.Now(), 3 * kNsPerSec);
}

// A rank that ignores SIGTERM gets SIGKILL exactly one grace period later.
TEST(LocalLauncherTest, ARankIgnoringSigtermIsKilledAfterTheGrace) {
  ManualEnv env;
  Script(&env, {{0, {kNsPerSec, ExitedWith(1)}}, {1, {-1, 0, /*ignores_sigterm=*/true}}});
  LaunchOptions o = Ranks(2);
  o.grace = 5 * kNsPerSec;
  auto r = RunLocalRanks(o, &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->message, "rank 0 failed: exit code 1; stopped the other 1 rank(s)");
  EXPECT_EQ(Sent(env), (std::vector<std::tuple<int, int, TimeNs>>{
                           {1, SIGTERM, kNsPerSec}, {1, SIGKILL, 6 * kNsPerSec}}));
}

TEST(LocalLauncherTest, AKilledRankIsReportedWithItsSignal) {
  ManualEnv manual;
  Script(&manual, {});
  env::FaultyEnv env(&manual);
  env.KillChild(0, 2 * kNsPerSec, SIGKILL);  // the OOM killer, an operator
  auto r = RunLocalRanks(Ranks(2), &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->failed_rank, 0);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_NE(r->message.find("rank 0 failed: killed by signal 9"), std::string::npos) << r->message;
  EXPECT_EQ(manual.Now(), 2 * kNsPerSec);
}

// Rank 0 exits 75 ("a peer failed") at once; rank 2, the cause, exits 3 half a second later.
// The launcher waits for it rather than stopping anyone, then reports the cause's code and
// names it, not the witness that happened to exit first.
TEST(LocalLauncherTest, TheCauseIsReportedEvenWhenAWitnessExitsFirst) {
  ManualEnv env;
  Script(&env, {{0, {0, ExitedWith(kExitPeerFailed)}}, {2, {kNsPerSec / 2, ExitedWith(3)}}});
  auto r = RunLocalRanks(Ranks(3), &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3) << r->message;
  EXPECT_EQ(r->failed_rank, 2) << r->message;
  EXPECT_EQ(r->message,
            "rank 2 failed: exit code 3 (then rank 0 exit code 75); stopped the other 1 rank(s)");
  EXPECT_EQ(Sent(env), (std::vector<std::tuple<int, int, TimeNs>>{{1, SIGTERM, kNsPerSec / 2}}));
}

// Only witnesses here (the cause ran on another node): after the settle time (the grace when
// shorter) the others are stopped and the witness's code is returned, said to be a witness's.
TEST(LocalLauncherTest, OnlyWitnessesReportTheWitnessCode) {
  ManualEnv env;
  Script(&env, {{1, {kNsPerSec, ExitedWith(kExitPeerFailed)}}});
  LaunchOptions o = Ranks(2);
  o.grace = kNsPerSec;
  auto r = RunLocalRanks(o, &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitPeerFailed) << r->message;
  EXPECT_EQ(r->failed_rank, 1);
  EXPECT_NE(r->message.find("look for the cause in the other nodes' output"), std::string::npos)
      << r->message;
  EXPECT_EQ(Sent(env), (std::vector<std::tuple<int, int, TimeNs>>{{0, SIGTERM, 2 * kNsPerSec}}));
}

// SIGINT to the launcher goes to every rank, and is the outcome.
TEST(LocalLauncherTest, AnInterruptIsForwardedAndIsTheOutcome) {
  ManualEnv env;
  Script(&env, {});
  env.SignalAt(4 * kNsPerSec, SIGINT);
  auto r = RunLocalRanks(Ranks(2), &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 128 + SIGINT);
  EXPECT_EQ(r->failed_rank, -1);
  EXPECT_EQ(r->message, "interrupted by Interrupt");
  EXPECT_EQ(Sent(env), (std::vector<std::tuple<int, int, TimeNs>>{
                           {0, SIGINT, 4 * kNsPerSec}, {1, SIGINT, 4 * kNsPerSec}}));
}

// fork fails for the third rank: the two started are stopped and the failure is the message.
TEST(LocalLauncherTest, AFailedSpawnStopsTheRanksAlreadyStarted) {
  ManualEnv manual;
  Script(&manual, {});
  env::FaultyEnv env(&manual);
  env.FailSpawnsAfter(2, EAGAIN);
  auto r = RunLocalRanks(Ranks(4), &env);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_EQ(r->message, "fork for rank 2 failed: Resource temporarily unavailable");
  EXPECT_EQ(manual.spawned().size(), 2u);
  EXPECT_EQ(Sent(manual), (std::vector<std::tuple<int, int, TimeNs>>{{0, SIGTERM, 0},
                                                                     {1, SIGTERM, 0}}));
}

TEST(LocalLauncherTest, EveryLaunchHasItsOwnNonceJobIdAndRendezvousDirectory) {
  ManualEnv env;
  for (int i = 0; i < 2; ++i) {
    auto r = RunLocalRanks(Ranks(2), &env);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->exit_code, 0) << r->message;
  }
  const auto s = env.spawned();
  ASSERT_EQ(s.size(), 4u);
  auto id = [&](size_t i) { return Var(s[i], "GENIE_JOB_ID") + " " + Var(s[i], "GENIE_LAUNCH_NONCE"); };
  EXPECT_EQ(id(0), id(1));  // one launch: one job id, one nonce
  EXPECT_NE(id(0), id(2));
  EXPECT_EQ(id(0).size(), std::string("launch-0123456789abcdef 0123456789abcdef").size()) << id(0);
  // Each made its own rendezvous directory and removed it when done.
  const std::string d0 = Var(s[0], "GENIE_RENDEZVOUS"), d2 = Var(s[2], "GENIE_RENDEZVOUS");
  EXPECT_EQ(d0.rfind("dir:/tmp/genie-launch-", 0), 0u) << d0;
  EXPECT_NE(d0, d2);
  EXPECT_FALSE(env.FileExists(d0.substr(4)));
}

TEST(LocalLauncherTest, MissingProgramFails) {
  LaunchOptions o;
  o.ranks = 2;
  o.argv = {"/nonexistent/genie-nothing"};
  auto r = RunLocalRanks(o);  // real processes: exec itself fails
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_GE(r->failed_rank, 0);
}

}  // namespace
}  // namespace genie::launch
