// `genie results`: show prints what `genie run` printed at its end (one implementation,
// PrintRunResults), strip's output names, merge's refusal of a malformed clock offset.
#include "genie/driver/results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "genie/driver/run_results.h"
#include "genie/report/prediction.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/summary.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

// Two ranks, two measured iterations of one all-reduce each.
report::RunRecords Records() {
  report::RunRecords r;
  r.run_info = {{"workload", "w"}, {"world_size", 2}, {"iterations", 2}};
  for (int it = 0; it < 2; ++it) {
    for (int rank = 0; rank < 2; ++rank) {
      const TimeNs start = it * 1'000'000;
      record::OpEvent e;
      e.rank = rank;
      e.iteration = it;
      e.node = 1;
      e.name = "allreduce";
      e.kind = OpKind::kCollective;
      e.start = start + 10'000;
      e.end = start + 600'000 + rank * 1000;
      e.size = 1 << 20;
      e.group_size = 2;
      e.algorithm = "ring";
      e.bytes_sent = e.bytes_received = 1 << 20;
      r.ops.push_back(e);
      record::RankSummary s;
      s.rank = rank;
      s.iteration = it;
      s.start = start;
      s.finish = start + 700'000;
      s.comm_ns = 590'000;
      s.exposed_comm_ns = 700'000;
      r.ranks.push_back(s);
    }
  }
  return r;
}

report::Comparison Baseline(const report::RunRecords& r) {
  report::Expectation e;
  e.source = "baseline old/results.json";
  e.step_ns = 500'000;
  return report::Compare(r.ops, r.ranks, e, report::kDefaultFlagThreshold);
}

TEST(RunResults, PrintsSummaryTrafficThenTheRunsOwnLineThenComparisons) {
  const report::RunRecords r = Records();
  const report::Comparison c = Baseline(r);
  std::ostringstream got;
  PrintRunResults(got, r, {c}, std::nullopt, [&] { got << "<prediction line>\n"; });
  std::ostringstream want;
  report::PrintSummary(want, r.ops, r.ranks);
  report::PrintTraffic(want, nlohmann::json());
  want << "<prediction line>\n";
  report::PrintComparison(want, c);
  EXPECT_EQ(got.str(), want.str());
  EXPECT_NE(got.str().find("baseline old/results.json"), std::string::npos) << got.str();
}

TEST(ResultsShow, PrintsWhatTheRunPrintedFromItsResultsFile) {
  const report::RunRecords r = Records();
  const report::Comparison c = Baseline(r);
  // As genie run writes it (run_results.cc): the records and the baseline beside them.
  nlohmann::json doc = report::BuildResultsJson(r.run_info, r.ops, r.ranks, r.clock_offsets_ns);
  doc["baseline"] = report::ToJson(c);
  const TempDir tmp("driver-results");
  const fs::path dir = tmp.path();
  const std::string file = (dir / "results.json").string();
  ASSERT_TRUE(report::WriteJsonFile(file, doc).ok());
  auto loaded = report::LoadResults(file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  std::ostringstream want;
  PrintRunResults(want, *loaded, {report::ComparisonFromJson(doc["baseline"])}, std::nullopt);

  std::ostringstream got;
  std::streambuf* old = std::cout.rdbuf(got.rdbuf());
  const int rc = ShowResults({{file}, /*astra_sim=*/false});
  std::cout.rdbuf(old);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(got.str(), want.str());
  EXPECT_NE(got.str().find("baseline old/results.json"), std::string::npos) << got.str();

  // A file that is not genie's: bad input.
  const std::string junk = (dir / "junk.json").string();
  ASSERT_TRUE(report::WriteJsonFile(junk, nlohmann::json::array({1, 2})).ok());
  std::cout.rdbuf(got.rdbuf());
  const int bad = ShowResults({{junk}, false});
  std::cout.rdbuf(old);
  EXPECT_EQ(bad, 2);
}

TEST(ResultsStrip, NamesTheStrippedFileBesideOrInADirectory) {
  EXPECT_EQ(StrippedPath("out/run.json", ""), "out/run.stripped.json");
  EXPECT_EQ(StrippedPath("out/rank0.jsonl", "/tmp/s"), "/tmp/s/rank0.stripped.jsonl");
  EXPECT_EQ(StrippedPath("run.json", ""), "run.stripped.json");
}

TEST(ResultsMerge, RefusesAMalformedClockOffsetBeforeReadingAnything) {
  ResultsMergeOptions o;
  o.out = "/nonexistent/merged.json";
  o.files = {"/nonexistent/rank0.jsonl"};
  o.clock_offsets = {"3:-1500"};
  EXPECT_EQ(MergeResults(o), 2);
  o.clock_offsets = {"x=5"};
  EXPECT_EQ(MergeResults(o), 2);
}

}  // namespace
}  // namespace genie::driver
