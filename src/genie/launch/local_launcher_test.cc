#include "genie/launch/local_launcher.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "tests/support/temp_dir.h"

namespace genie::launch {
namespace {

using ::genie::testing::TempDir;

TEST(LocalLauncherTest, EveryRankGetsItsEnvironment) {
  const TempDir tmp("local-launcher");
  std::string dir = tmp.path();
  LaunchOptions o;
  o.ranks = 3;
  o.job_id = "jobX";
  o.rendezvous = dir + "/rdzv";
  o.argv = {"/bin/sh", "-c",
            "echo $GENIE_RANK $GENIE_WORLD_SIZE $GENIE_LOCAL_RANK $GENIE_RENDEZVOUS $GENIE_JOB_ID > " +
                dir + "/out.$GENIE_RANK"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->message;
  EXPECT_EQ(r->failed_rank, -1);
  for (int i = 0; i < 3; ++i) {
    std::ifstream in(dir + "/out." + std::to_string(i));
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, std::to_string(i) + " 3 " + std::to_string(i) + " dir:" + dir + "/rdzv jobX");
  }
}

TEST(LocalLauncherTest, AFailingRankStopsTheOthersAndIsNamed) {
  LaunchOptions o;
  o.ranks = 4;
  o.argv = {"/bin/sh", "-c", "if [ $GENIE_RANK = 2 ]; then exit 3; fi; exec sleep 60"};
  auto r = RunLocalRanks(o);  // would take 60 s if the others were not stopped
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->failed_rank, 2);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_NE(r->message.find("rank 2 failed: exit code 3"), std::string::npos) << r->message;
}

TEST(LocalLauncherTest, AKilledRankIsReportedWithItsSignal) {
  LaunchOptions o;
  o.ranks = 2;
  o.argv = {"/bin/sh", "-c", "if [ $GENIE_RANK = 0 ]; then kill -9 $$; fi; exec sleep 60"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->failed_rank, 0);
  EXPECT_EQ(r->exit_code, 128 + 9);
  EXPECT_NE(r->message.find("killed by signal 9"), std::string::npos) << r->message;
}

// Rank 0 exits 75 ("a peer failed") at once; rank 2, the cause, exits 3 a moment later. The
// launcher reports the cause's code and names it, not the witness that happened to exit first.
TEST(LocalLauncherTest, TheCauseIsReportedEvenWhenAWitnessExitsFirst) {
  LaunchOptions o;
  o.ranks = 3;
  o.argv = {"/bin/sh", "-c",
            "if [ $GENIE_RANK = 0 ]; then exit 75; fi; "
            "if [ $GENIE_RANK = 2 ]; then sleep 0.5; exit 3; fi; exec sleep 60"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 3) << r->message;
  EXPECT_EQ(r->failed_rank, 2) << r->message;
  EXPECT_NE(r->message.find("rank 2 failed: exit code 3 (then rank 0 exit code 75)"),
            std::string::npos)
      << r->message;
}

// Only witnesses here (the cause ran on another node): their code, said to be a witness's.
TEST(LocalLauncherTest, OnlyWitnessesReportTheWitnessCode) {
  LaunchOptions o;
  o.ranks = 2;
  o.grace = kNsPerSec;
  o.argv = {"/bin/sh", "-c", "if [ $GENIE_RANK = 1 ]; then exit 75; fi; exec sleep 60"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, kExitPeerFailed) << r->message;
  EXPECT_EQ(r->failed_rank, 1);
  EXPECT_NE(r->message.find("look for the cause in the other nodes' output"), std::string::npos)
      << r->message;
}

TEST(LocalLauncherTest, EveryLaunchHasItsOwnNonceAndJobId) {
  const TempDir tmp("local-launcher");
  std::string dir = tmp.path();
  for (int i = 0; i < 2; ++i) {
    LaunchOptions o;
    o.ranks = 2;
    o.argv = {"/bin/sh", "-c",
              "echo $GENIE_JOB_ID $GENIE_LAUNCH_NONCE > " + dir + "/" + std::to_string(i) +
                  ".$GENIE_RANK"};
    auto r = RunLocalRanks(o);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->exit_code, 0) << r->message;
  }
  auto line = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    std::string l;
    std::getline(in, l);
    return l;
  };
  EXPECT_EQ(line("0.0"), line("0.1"));  // one launch: one job id, one nonce
  EXPECT_NE(line("0.0"), line("1.0"));
  EXPECT_EQ(line("0.0").size(), std::string("launch-0123456789abcdef 0123456789abcdef").size())
      << line("0.0");
}

TEST(LocalLauncherTest, MissingProgramFails) {
  LaunchOptions o;
  o.ranks = 2;
  o.argv = {"/nonexistent/genie-nothing"};
  auto r = RunLocalRanks(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_GE(r->failed_rank, 0);
}

}  // namespace
}  // namespace genie::launch
