#include "genie/report/results_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "genie/record/recorder.h"
#include "genie/report/test_records.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
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
  std::string Path(int rank) {
    return (dir_ / ("rank" + std::to_string(rank) + ".jsonl")).string();
  }
  TempDir tmp_{"results-file"};
  fs::path dir_ = tmp_.path();
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

// Each rank's compute-fault events come out on rank 0's clock, as its ops do.
TEST_F(ResultsFileTest, ComputeFaultEventsMergeOnRankZerosClock) {
  const std::string path = (dir_ / "faulted1.jsonl").string();
  {
    auto rec = record::Recorder::Create(path, {{"rank", 1}});
    ASSERT_TRUE(rec.ok());
    (*rec)->Note("compute_faults",
                 {{"rank", 1},
                  {"events",
                   {{{"fault", "rank 1: stall 1.000 s at iteration 1"},
                     {"entry", 1},
                     {"rank", 1},
                     {"action", "stall"},
                     {"iteration", 1},
                     {"at_ns", 5000}}}}});
  }
  auto m = MergeStreams({Path(0), path}, {{1, 1000}});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->run_info["compute_faults"].size(), 1u);
  EXPECT_EQ(m->run_info["compute_faults"][0]["at_ns"], 6000);
  EXPECT_EQ(m->run_info["compute_faults"][0]["action"], "stall");
}

// A stream of `rank` with a clock record (machine `host`, offset, round trip) and one op.
std::string ClockedStream(const fs::path& dir, int rank, const std::string& host, TimeNs offset,
                          TimeNs rtt, const std::string& run = "run-a") {
  const std::string path = (dir / ("clocked" + std::to_string(rank) + ".jsonl")).string();
  auto rec = record::Recorder::Create(path, {{"rank", rank}});
  EXPECT_TRUE(rec.ok());
  (*rec)->Note(
      "clock",
      {{"rank", rank}, {"run_id", run}, {"host_id", host}, {"offset_ns", offset}, {"rtt_ns", rtt}});
  record::OpEvent e = testing::RunOps(0).front();
  e.rank = rank;
  e.start = 1000;
  e.end = 2000;
  (*rec)->OnOp(e);
  return path;
}

TEST_F(ResultsFileTest, RanksOfOneMachineShareItsBestClockEstimate) {
  auto m =
      MergeStreams({ClockedStream(dir_, 0, "A", 0, 0), ClockedStream(dir_, 1, "A", 40, 90),
                    ClockedStream(dir_, 2, "B", 5000, 80), ClockedStream(dir_, 3, "B", 5100, 30)});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // Machine A is rank 0's (offset 0 at round trip 0); machine B's best is rank 3's.
  EXPECT_EQ(m->clock_offsets_ns, nlohmann::json({{"0", 0}, {"1", 0}, {"2", 5100}, {"3", 5100}}));
  for (const auto& e : m->ops) EXPECT_EQ(e.start, 1000 + (e.rank >= 2 ? 5100 : 0)) << e.rank;
  // An explicit offset still wins.
  auto given = MergeStreams({ClockedStream(dir_, 2, "B", 5000, 80)}, {{2, -7}});
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->clock_offsets_ns, nlohmann::json({{"2", -7}}));
}

TEST_F(ResultsFileTest, StreamsOfTwoRunsDoNotMerge) {
  auto m = MergeStreams(
      {ClockedStream(dir_, 0, "A", 0, 0, "run-a"), ClockedStream(dir_, 1, "A", 0, 0, "run-b")});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("another run"), std::string::npos) << m.status().message();
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

// Files that are empty, skeletal, of the wrong shape or nested absurdly deep: an error naming the
// file and the place, or (skeletal but valid) no records — never an exception or a crash.
TEST_F(ResultsFileTest, OddFilesAreErrorsNamingThePlaceNeverExceptions) {
  struct Case {
    std::string text;
    bool ok;
    std::string message_has;
  };
  const std::vector<Case> cases = {
      {"", false, "is empty"},
      {"\n  \n", false, "is empty"},
      {"{\"format\":\"genie-results\"}", true, ""},
      {"{\"format\":\"genie-results\",\"version\":1,\"provenance\":null}", true, ""},
      {"{\"format\":5}", false, "not a genie results file"},
      {"{\"format\":\"genie-results\",\"provenance\":3}", false, "\"provenance\""},
      {"{\"format\":\"genie-results\",\"ranks\":[1]}", false, "ranks[0]"},
      {"{\"format\":\"genie-results\",\"ranks\":[{\"iterations\":[{\"rank\":0}]}]}", false,
       "ranks[0].iterations[0]: field \"iteration\" is missing"},
      {"{\"format\":\"genie-results\",\"collectives\":{\"a\":1}}", false, "\"collectives\""},
      {"{\"format\":\"genie-results\",\"collectives\":[{\"kind\":\"send\",\"rank\":0,"
       "\"size\":\"big\"}]}",
       false, "collectives[0]: field \"size\""},
      {"{\"format\":\"genie-results\",\"clock_offsets_ns\":{\"1\":\"x\"}}", false,
       "clock_offsets_ns"},
      {"{\"format\":\"genie-results\",\"provenance\":{\"traffic\":[{\"peers\":[5]}]}}", false,
       "provenance.traffic[0]: peers[0]"},
      {"{\"format\":\"genie-results\",\"version\":99}", false, "newer genie"},
      {"[1,2,3]", false, "should be a JSON object"},
      {"{\"record\":\"op\",\"kind\":\"compute\",\"rank\":0}\n", true, ""},  // header-less
      {std::string(300000, '{'), false, "nested more than"},
  };
  int i = 0;
  for (const Case& c : cases) {
    const std::string p = (dir_ / ("odd" + std::to_string(i++) + ".json")).string();
    std::ofstream(p) << c.text;
    Result<RunRecords> r = Status::Internal("not run");
    ASSERT_NO_THROW(r = LoadResults(p)) << c.text.substr(0, 100);
    EXPECT_EQ(r.ok(), c.ok) << c.text.substr(0, 100) << ": " << r.status().ToString();
    if (!c.ok && !r.ok()) {
      EXPECT_NE(r.status().message().find(p), std::string::npos) << r.status().message();
      EXPECT_NE(r.status().message().find(c.message_has), std::string::npos)
          << "wanted \"" << c.message_has << "\" in: " << r.status().message();
    }
  }
}

TEST_F(ResultsFileTest, MergeOfOddStreamsNeverThrows) {
  const std::string a = (dir_ / "a.jsonl").string();
  std::ofstream(a) << "{\"record\":\"header\",\"format\":\"genie-record\",\"run\":{}}\n"
                      "{\"record\":\"clock\",\"run_id\":null,\"host_id\":null,"
                      "\"offset_ns\":5,\"rtt_ns\":null}\n";
  const std::string empty = (dir_ / "empty.jsonl").string();
  std::ofstream(empty) << "";
  Result<RunRecords> m = Status::Internal("not run");
  ASSERT_NO_THROW(m = MergeStreams({a, empty, Path(1)}));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
}

TEST_F(ResultsFileTest, StreamsOfRunsOfDifferentSizesDoNotMerge) {
  const std::string a = (dir_ / "a.jsonl").string();
  const std::string b = (dir_ / "b.jsonl").string();
  std::ofstream(a) << "{\"record\":\"header\",\"format\":\"genie-record\",\"run\":"
                      "{\"rank\":0,\"world_size\":2}}\n";
  std::ofstream(b) << "{\"record\":\"header\",\"format\":\"genie-record\",\"run\":"
                      "{\"rank\":1,\"world_size\":4}}\n";
  auto m = MergeStreams({a, b});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("run of 4 ranks"), std::string::npos)
      << m.status().message();
}

// The in-memory entry point (what fuzz/results_fuzz drives) reads what LoadResults reads and
// names the text by the name it is given.
TEST_F(ResultsFileTest, ParseResultsReadsTextAsLoadResultsReadsTheFile) {
  std::ifstream in(Path(1), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto from_file = LoadResults(Path(1));
  auto from_text = ParseResults(text, "rank1.jsonl");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  EXPECT_EQ(from_text->ops.size(), from_file->ops.size());
  EXPECT_EQ(from_text->ranks.size(), from_file->ranks.size());
  EXPECT_EQ(from_text->run_info, from_file->run_info);
  auto empty = ParseResults(" \n", "given-name.json");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("given-name.json is empty"), std::string::npos)
      << empty.status().message();
}

}  // namespace
}  // namespace genie::report
