#include "genie/report/streamed_outputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "genie/record/recorder.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/external_sort.h"
#include "genie/report/results_json.h"
#include "genie/report/test_records.h"
#include "tests/support/file.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::ReadFile;
using ::genie::testing::TempDir;

namespace fs = std::filesystem;
using nlohmann::json;

class StreamedOutputsTest : public ::testing::Test {
 protected:
  // Many ops over several ranks, iterations and lanes, recorded out of every output's order.
  std::vector<record::OpEvent> ManyOps() {
    std::vector<record::OpEvent> ops = testing::RunOps(7);
    for (int i = 0; i < 400; ++i) {
      record::OpEvent e = ops[static_cast<size_t>(i) % ops.size()];
      e.rank = (i * 7) % 5;
      e.node = static_cast<NodeId>(1000 - i);
      e.start = (i * 7919) % 100000;
      e.end = e.start + (i % 13) * 1000;
      e.name = i % 3 == 0 ? "" : "op \"" + std::to_string(i) + "\"";
      if (i % 5 == 0 && e.kind == OpKind::kCollective) {
        e.phases = {{1, 0, CollectiveType::kReduceScatter, e.start, e.start + 10},
                    {1, 1, CollectiveType::kAllReduce, e.start + 10, e.end}};
      }
      ops.push_back(e);
    }
    return ops;
  }

  // Streams `ops` through a Recorder as a run would; returns the stream's path.
  std::string Record(const json& run_info, const std::vector<record::OpEvent>& ops,
                     const std::vector<record::RankSummary>& ranks) {
    const std::string path = (dir_ / "simulate.jsonl").string();
    auto rec = record::Recorder::Create(path, run_info, /*keep_ops=*/false);
    EXPECT_TRUE(rec.ok());
    for (const auto& e : ops) (*rec)->OnOp(e);
    for (const auto& r : ranks) (*rec)->OnRankDone(r);
    EXPECT_TRUE((*rec)->Close().ok());
    EXPECT_TRUE((*rec)->ops().empty());  // nothing held in memory
    return path;
  }

  TempDir tmp_{"streamed-outputs"};
  fs::path dir_ = tmp_.path();
};

// The streamed files are byte for byte what the in-memory writers produce, whether the sorts
// stay in memory or spill hundreds of runs to disk.
TEST_F(StreamedOutputsTest, IdenticalToTheInMemoryWriters) {
  const json run_info = {{"command", "simulate"}, {"world_size", 5}, {"iterations", 2}};
  const auto ops = ManyOps();
  const auto ranks = testing::RunRanks(7);
  ASSERT_TRUE(WriteResultsJson((dir_ / "before.json").string(), run_info, ops, ranks).ok());
  ASSERT_TRUE(WriteChromeTrace((dir_ / "before.trace.json").string(), ops).ok());
  const std::string stream = Record(run_info, ops, ranks);
  for (size_t memory : {size_t{64} << 20, size_t{2048}}) {
    StreamedOutputs out;
    out.results_path = (dir_ / "results.json").string();
    out.trace_path = (dir_ / "trace.json").string();
    out.memory_bytes = memory;
    auto st = WriteStreamedOutputs(stream, run_info, ranks, out);
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->ops, ops.size());
    EXPECT_FALSE(st->truncated);
    if (memory < 4096) {
      EXPECT_GT(st->spilled_runs, 10u);
    } else {
      EXPECT_EQ(st->spilled_runs, 0u);
    }
    EXPECT_EQ(ReadFile(dir_ / "results.json"), ReadFile(dir_ / "before.json")) << memory;
    EXPECT_EQ(ReadFile(dir_ / "trace.json"), ReadFile(dir_ / "before.trace.json")) << memory;
  }
  // The scratch files are gone.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".sort-"), std::string::npos) << entry.path();
  }
}

TEST_F(StreamedOutputsTest, NoOpsGivesEmptyListsLikeBefore) {
  const json run_info = {{"command", "simulate"}};
  ASSERT_TRUE(WriteResultsJson((dir_ / "before.json").string(), run_info, {}, {}).ok());
  ASSERT_TRUE(WriteChromeTrace((dir_ / "before.trace.json").string(), {}).ok());
  const std::string stream = Record(run_info, {}, {});
  StreamedOutputs out;
  out.results_path = (dir_ / "results.json").string();
  out.trace_path = (dir_ / "trace.json").string();
  ASSERT_TRUE(WriteStreamedOutputs(stream, run_info, {}, out).ok());
  EXPECT_EQ(ReadFile(dir_ / "results.json"), ReadFile(dir_ / "before.json"));
  EXPECT_EQ(ReadFile(dir_ / "trace.json"), ReadFile(dir_ / "before.trace.json"));
}

// A run stopped mid-write leaves a cut last line: the outputs are still written from the ops
// before it, and say that the run is incomplete.
TEST_F(StreamedOutputsTest, StreamCutMidLineStillGivesResults) {
  const json run_info = {{"command", "simulate"}, {"world_size", 2}, {"iterations", 2}};
  const auto ops = testing::RunOps(7);
  const std::string stream = Record(run_info, ops, {});
  std::string text = ReadFile(stream);
  text.resize(text.size() - 20);  // cut the last op record
  std::ofstream(stream, std::ios::binary | std::ios::trunc) << text;
  StreamedOutputs out;
  out.results_path = (dir_ / "results.json").string();
  auto st = WriteStreamedOutputs(stream, run_info, {}, out);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_TRUE(st->truncated);
  EXPECT_EQ(st->ops, ops.size() - 1);
  const json doc = json::parse(ReadFile(dir_ / "results.json"));
  EXPECT_FALSE(doc["completeness"]["complete"].get<bool>());
  EXPECT_EQ(doc["collectives"].size(), 8u);  // 9 communication ops, the last one cut
}

TEST_F(StreamedOutputsTest, DamagedLineInTheMiddleIsAnErrorNamingIt) {
  const std::string stream = Record({}, testing::RunOps(7), {});
  std::string text = ReadFile(stream);
  text.insert(text.find('\n') + 1, "{not json\n");
  std::ofstream(stream, std::ios::binary | std::ios::trunc) << text;
  StreamedOutputs out;
  out.results_path = (dir_ / "results.json").string();
  auto st = WriteStreamedOutputs(stream, {}, {}, out);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("line 2"), std::string::npos) << st.status().message();
  EXPECT_FALSE(fs::exists(dir_ / "results.json"));
}

TEST(ExternalSorterTest, MergesSpilledRunsInKeyThenInsertionOrder) {
  const fs::path scratch = fs::temp_directory_path() / ("genie_sorter_" + std::to_string(getpid()));
  ExternalSorter<int> sorter(scratch.string(), 1024);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(sorter.Add((i * 37) % 101, std::to_string(i)).ok());
  }
  EXPECT_GT(sorter.runs(), 5u);
  std::vector<std::pair<int, int>> seen;
  ASSERT_TRUE(sorter
                  .Finish([&](const int& k, std::string_view v) {
                    seen.push_back({k, std::stoi(std::string(v))});
                    return Status::Ok();
                  })
                  .ok());
  ASSERT_EQ(seen.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));  // key, then insertion order
}

}  // namespace
}  // namespace genie::report
