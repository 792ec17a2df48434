#include "genie/report/run_streams.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "genie/record/recorder.h"
#include "genie/record/run_folder.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class RunStreamsTest : public ::testing::Test {
 protected:
  void Stream(int rank, const std::string& run) {
    auto r = record::Recorder::Create(record::StreamPath(dir_, rank), {{"rank", rank}});
    ASSERT_TRUE(r.ok());
    (*r)->Note("clock", {{"rank", rank}, {"run_id", run}});
  }
  TempDir tmp_{"run-streams"};
  std::string dir_ = tmp_.path();
};

TEST_F(RunStreamsTest, TheLowestRankWithAStreamOfThisRunWrites) {
  for (int r = 0; r < 4; ++r) Stream(r, "now");
  auto w = FindRunStreams(dir_, 0, 4, "now");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->writer);
  EXPECT_EQ(w->ranks, (std::vector<int>{0, 1, 2, 3}));
  auto n = FindRunStreams(dir_, 2, 4, "now");
  ASSERT_TRUE(n.ok());
  EXPECT_FALSE(n->writer);
}

// Another host's folder: ranks 2 and 3 here, an earlier run's rank 0 and 1 left behind.
TEST_F(RunStreamsTest, EarlierRunsLeftoversAreSkipped) {
  Stream(0, "before");
  Stream(1, "before");
  Stream(2, "now");
  Stream(3, "now");
  auto w = FindRunStreams(dir_, 2, 4, "now");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(w->writer);
  EXPECT_EQ(w->ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(w->paths.front(), record::StreamPath(dir_, 2));
  auto three = FindRunStreams(dir_, 3, 4, "now");
  ASSERT_TRUE(three.ok());
  EXPECT_FALSE(three->writer);
}

// The folder was replaced while the run went on (or another job wrote into it): no stream of
// this run is left. An error naming the rank's stream, never an empty list to merge.
TEST_F(RunStreamsTest, AFolderWithoutThisRunsStreamsIsAnErrorNamingTheStream) {
  Stream(0, "other-job");
  for (int rank : {0, 1}) {
    auto w = FindRunStreams(dir_, rank, 2, "now");
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), Status::Code::kNotFound);
    EXPECT_NE(w.status().message().find(record::StreamPath(dir_, rank) +
                                        " is no longer this run's stream"),
              std::string::npos)
        << w.status().message();
  }
}

}  // namespace
}  // namespace genie::report
