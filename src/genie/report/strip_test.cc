#include "genie/report/strip.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/record/recorder.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/provenance.h"
#include "genie/report/results_json.h"
#include "genie/report/test_records.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

using nlohmann::json;
namespace fs = std::filesystem;

class StripTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) { return (dir_ / name).string(); }
  TempDir tmp_{"strip"};
  fs::path dir_ = tmp_.path();
};

json Info(const std::string& host, const std::string& time) {
  json p = Provenance({{"system", {{"endpoint-delay", 10}, {"start", "kept"}}}},
                      {{"name", "tcp"}, {"channels", 4}}, {"genie", "run", "--output", host});
  p["hostname"] = host;
  p["time"] = time;
  return p;
}

TEST_F(StripTest, TwoRunsWithDifferentTimingsCompareEqualOnceStripped) {
  json a = BuildResultsJson(Info("hostA", "2026-01-01T00:00:00Z"), testing::RunOps(0),
                            testing::RunRanks(0));
  json b = BuildResultsJson(Info("hostB", "2026-01-02T00:00:00Z"), testing::RunOps(13),
                            testing::RunRanks(13));
  ASSERT_NE(a, b);
  json sa = StripTimings(a);
  json sb = StripTimings(b);
  EXPECT_EQ(sa, sb) << sa.dump(1) << "\n----\n" << sb.dump(1);

  // What stays: the structure and every non-timing field; configs are kept verbatim.
  EXPECT_EQ(sa["provenance"]["configs"]["system"]["start"], "kept");
  EXPECT_EQ(sa["provenance"]["transport"]["channels"], 4);
  EXPECT_FALSE(sa["provenance"].contains("hostname"));
  EXPECT_FALSE(sa["provenance"].contains("time"));
  EXPECT_FALSE(sa["provenance"].contains("command_line"));
  EXPECT_TRUE(sa["provenance"].contains("sysctls"));
  ASSERT_EQ(sa["collectives"].size(), 9u);
  const json& c = sa["collectives"][1];
  EXPECT_EQ(c["size"], 1048576);
  EXPECT_EQ(c["bytes_sent"], 1048576);
  for (const char* k : {"start", "end", "duration_ns", "algbw_gbps", "busbw_gbps"}) {
    EXPECT_FALSE(c.contains(k)) << k;
  }
  EXPECT_FALSE(sa["summary"].contains("step_time_ns"));
  EXPECT_FALSE(sa["ranks"][0].contains("finish"));
}

TEST_F(StripTest, FilesOfAllThreeKindsCompareEqualOnceStripped) {
  for (TimeNs skew : {0, 13}) {
    std::string tag = std::to_string(skew);
    ASSERT_TRUE(WriteResultsJson(Path("results" + tag + ".json"), Info("h" + tag, tag),
                                 testing::RunOps(skew), testing::RunRanks(skew))
                    .ok());
    ASSERT_TRUE(WriteChromeTrace(Path("trace" + tag + ".json"), testing::RunOps(skew)).ok());
    auto rec = record::Recorder::Create(Path("rank" + tag + ".jsonl"), Info("h" + tag, tag));
    ASSERT_TRUE(rec.ok());
    auto ops = testing::RunOps(skew);
    // Completion order differs between runs too.
    if (skew != 0) std::reverse(ops.begin(), ops.end());
    for (const auto& e : ops) (*rec)->OnOp(e);
    for (const auto& s : testing::RunRanks(skew)) (*rec)->OnRankDone(s);
  }
  for (const char* name : {"results", "trace", "rank"}) {
    std::string ext = std::string(name) == "rank" ? ".jsonl" : ".json";
    auto a = StripFileText(Path(name + std::string("0") + ext));
    auto b = StripFileText(Path(name + std::string("13") + ext));
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(*a, *b) << name;
    EXPECT_EQ(a->find("\"end\""), std::string::npos) << name;
    EXPECT_EQ(a->find("\"ts\""), std::string::npos) << name;
  }
}

TEST_F(StripTest, OverlapLanesOfATraceAreFolded) {
  // Run A: two recvs overlap (two lanes); run B: they do not (one lane).
  record::OpEvent r1;
  r1.kind = OpKind::kRecv;
  r1.node = 1;
  r1.start = 0;
  r1.end = 100;
  record::OpEvent r2 = r1;
  r2.node = 2;
  r2.start = 50;
  r2.end = 150;
  json a = StripTimings(BuildChromeTrace({r1, r2}));
  r2.start = 100;
  json b = StripTimings(BuildChromeTrace({r1, r2}));
  EXPECT_EQ(a, b);
}

// Deep nesting used to overflow the stack (strip copies and walks the tree recursively); odd
// Chrome trace events used to throw. Both are errors or plain output now.
TEST_F(StripTest, DeepOrOddFilesAreErrorsNotCrashes) {
  const std::string deep = Path("deep.json");
  std::ofstream(deep) << std::string(400000, '[') << std::string(400000, ']') << "\n";
  Result<std::string> r = Status::Internal("not run");
  ASSERT_NO_THROW(r = StripFileText(deep));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(deep), std::string::npos) << r.status().message();

  const std::string lines = Path("deep.jsonl");
  std::ofstream(lines) << "{\"record\":\"op\"}\n" << std::string(400000, '{') << "\n{}\n";
  ASSERT_NO_THROW(r = StripFileText(lines));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status().message();

  const std::string trace = Path("odd.trace.json");
  std::ofstream(trace) << "{\"traceEvents\":[1, {\"tid\":101,\"ph\":5,\"name\":[]}]}\n";
  ASSERT_NO_THROW(r = StripFileText(trace));
  EXPECT_TRUE(r.ok()) << r.status().ToString();

  const std::string record = Path("odd.jsonl");
  std::ofstream(record) << "{\"record\":5}\n{\"record\":\"header\"}\n";
  ASSERT_NO_THROW(r = StripFileText(record));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

// The in-memory entry point (what fuzz/results_fuzz drives) strips what StripFileText strips.
TEST_F(StripTest, StripTextStripsWhatStripFileTextStrips) {
  const std::string text =
      "{\"record\":\"header\",\"format\":\"genie-record\",\"run\":{\"time\":\"now\"}}\n"
      "{\"record\":\"op\",\"rank\":1,\"start\":5,\"end\":9}\n"
      "{\"record\":\"op\",\"rank\":0,\"start\":7,\"end\":8}\n";
  std::ofstream(Path("s.jsonl"), std::ios::binary) << text;
  auto from_file = StripFileText(Path("s.jsonl"));
  auto from_text = StripText(text, "s.jsonl");
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  EXPECT_EQ(*from_text, *from_file);
  EXPECT_EQ(from_text->find("start"), std::string::npos) << *from_text;
  auto empty = StripText("", "given-name.jsonl");
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("given-name.jsonl is empty"), std::string::npos);
}

}  // namespace
}  // namespace genie::report
