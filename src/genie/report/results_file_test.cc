#include "genie/report/results_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/record/recorder.h"
#include "genie/report/test_records.h"

namespace genie::report {
namespace {

namespace fs = std::filesystem;

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("genie_results_file_test_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // One stream per rank, as `genie run` writes them.
    for (int rank = 0; rank < 2; ++rank) {
      auto rec = record::Recorder::Create(Path(rank), {{"rank", rank}});
      ASSERT_TRUE(rec.ok());
      for (const auto& e : testing::RunOps(0)) {
        if (e.rank == rank) (*rec)->OnOp(e);
      }
      for (const auto& s : testing::RunRanks(0)) {
        if (s.rank == rank) (*rec)->OnRankDone(s);
      }
    }
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(int rank) {
    return (dir_ / ("rank" + std::to_string(rank) + ".jsonl")).string();
  }
  fs::path dir_;
};

TEST_F(ResultsFileTest, MergeCombinesRanksAndAppliesClockOffsets) {
  auto m = MergeStreams({Path(0), Path(1)}, {{1, 1000}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->ops.size(), 13u);
  EXPECT_EQ(m->ranks.size(), 4u);
  EXPECT_EQ(m->run_info["merged_files"], nlohmann::json({"rank0.jsonl", "rank1.jsonl"}));
  EXPECT_EQ(m->run_info["headers"][1], nlohmann::json({{"rank", 1}}));
  EXPECT_EQ(m->clock_offsets_ns, nlohmann::json({{"1", 1000}}));
  for (const auto& e : m->ops) {
    if (e.rank == 1 && e.iteration == 0 && e.node == 1) {
      EXPECT_EQ(e.start, 1000);
      EXPECT_EQ(e.end, 21000);
    }
    if (e.rank == 0 && e.iteration == 0 && e.node == 1) {
      EXPECT_EQ(e.start, 0);
    }
  }
  for (const auto& s : m->ranks) {
    if (s.rank == 1 && s.iteration == 1) {
      EXPECT_EQ(s.start, 101000);
      EXPECT_EQ(s.finish, 181000);
    }
  }
}

TEST_F(ResultsFileTest, TheSameRankTwiceIsAnError) {
  auto m = MergeStreams({Path(0), Path(0)});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("rank 0 appears in both"), std::string::npos);
}

TEST_F(ResultsFileTest, LoadReadsAStreamWithATruncatedTail) {
  std::string p = Path(0);
  auto size = fs::file_size(p);
  fs::resize_file(p, size - 7);
  auto r = LoadResults(p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->ranks.size(), 1u);  // the last rank line was cut
  EXPECT_EQ(r->run_info, nlohmann::json({{"rank", 0}}));
}

TEST_F(ResultsFileTest, OtherJsonIsRejectedWithAHint) {
  std::string p = (dir_ / "other.json").string();
  std::ofstream(p) << "{\"hello\": 1}\n";
  auto r = LoadResults(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a genie results file"), std::string::npos);
}

}  // namespace
}  // namespace genie::report
