#include "genie/launch/local_launcher.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace genie::launch {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/genie_ll_XXXXXX";
  return mkdtemp(tmpl);
}

TEST(LocalLauncherTest, EveryRankGetsItsEnvironment) {
  std::string dir = TempDir();
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
  std::filesystem::remove_all(dir);
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
