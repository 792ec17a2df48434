#include "genie/report/results_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "genie/report/results_file.h"
#include "genie/report/test_records.h"
#include "tests/support/temp_dir.h"

namespace genie::report {
namespace {

using ::genie::testing::TempDir;

using nlohmann::json;

TEST(ResultsJsonTest, FieldsAndFigures) {
  json info = {{"genie_version", "0.1.0"}, {"configs", {{"system", {{"start", 1}}}}}};
  // skew 0: every rank computes 20,000 ns and its collective takes 50,000 ns; the recv runs
  // [20,010, 80,000); each iteration spans 80,000 ns.
  json doc = BuildResultsJson(info, testing::RunOps(0), testing::RunRanks(0));
  EXPECT_EQ(doc["format"], "genie-results");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["provenance"], info);
  EXPECT_EQ(doc["clock_offsets_ns"], json::object());

  EXPECT_EQ(doc["summary"]["ranks"], 2);
  EXPECT_EQ(doc["summary"]["iterations"], 2);
  EXPECT_EQ(doc["summary"]["step_time_ns"], json({{"min", 80000}, {"median", 80000},
                                                  {"max", 80000}}));

  ASSERT_EQ(doc["iterations"].size(), 2u);
  EXPECT_EQ(doc["iterations"][1], json({{"iteration", 1}, {"start", 100000}, {"finish", 180000},
                                        {"step_time_ns", 80000}}));

  ASSERT_EQ(doc["ranks"].size(), 2u);
  const json& r1 = doc["ranks"][1];
  EXPECT_EQ(r1["rank"], 1);
  EXPECT_EQ(r1["start"], 0);
  EXPECT_EQ(r1["finish"], 180000);
  EXPECT_EQ(r1["compute_ns"], 40000);
  EXPECT_EQ(r1["comm_ns"], 120000);
  // Two iterations of 80,000 ns each (the 20,000 ns between them are the barrier's), minus
  // 40,000 ns of compute.
  EXPECT_EQ(r1["exposed_comm_ns"], 120000);
  EXPECT_EQ(r1["iterations"].size(), 2u);

  // Communication ops only, ordered by (iteration, rank, node); the warm-up comes first.
  const json& colls = doc["collectives"];
  ASSERT_EQ(colls.size(), 9u);
  EXPECT_EQ(colls[0]["iteration"], -1);
  std::vector<std::tuple<int, int, int>> order;
  for (const json& c : colls) order.emplace_back(c["iteration"], c["rank"], c["node"]);
  EXPECT_TRUE(std::is_sorted(order.begin(), order.end()));
  const json& c = colls[1];  // iteration 0, rank 0, node 2: the all-reduce
  EXPECT_EQ(c["type"], "all_reduce");
  EXPECT_EQ(c["size"], 1048576);
  EXPECT_EQ(c["group"], -1);
  EXPECT_EQ(c["group_size"], 2);
  EXPECT_EQ(c["algorithm"], "ring");
  EXPECT_EQ(c["start"], 20000);
  EXPECT_EQ(c["end"], 70000);
  EXPECT_EQ(c["duration_ns"], 50000);
  EXPECT_DOUBLE_EQ(c["algbw_gbps"].get<double>(), 1048576.0 / 50000.0);
  EXPECT_DOUBLE_EQ(c["busbw_gbps"].get<double>(), 1048576.0 / 50000.0);  // n=2: factor 1
  EXPECT_EQ(colls[2]["kind"], "recv");
  EXPECT_EQ(colls[2]["peer"], 1);

  const json& types = doc["collective_types"];
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0]["type"], "all_reduce");
  EXPECT_EQ(types[0]["count"], 4);  // 2 ranks x 2 iterations; the warm-up is left out
  EXPECT_EQ(types[0]["bytes"], 4 * 1048576);
  EXPECT_EQ(types[0]["mean_time_ns"], 50000.0);
  EXPECT_DOUBLE_EQ(types[0]["algbw_gbps"].get<double>(), 1048576.0 / 50000.0);
  EXPECT_EQ(types[1]["type"], "recv");
  EXPECT_DOUBLE_EQ(types[1]["busbw_gbps"].get<double>(), 4096.0 / 59990.0);
}

TEST(ResultsJsonTest, WrittenFileLoadsBackIntoTheSameRecords) {
  const TempDir tmp("results-json");
  const std::filesystem::path dir = tmp.path();
  std::string path = (dir / "results.json").string();
  auto ops = testing::RunOps(7);
  auto ranks = testing::RunRanks(7);
  ASSERT_TRUE(WriteResultsJson(path, {{"x", 1}}, ops, ranks).ok());
  auto loaded = LoadResults(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->run_info, json({{"x", 1}}));
  EXPECT_EQ(loaded->ops.size(), 9u);  // communication ops only
  ASSERT_EQ(loaded->ranks.size(), ranks.size());
  // Rebuilding from what was loaded gives the same document.
  EXPECT_EQ(BuildResultsJson({{"x", 1}}, loaded->ops, loaded->ranks),
            BuildResultsJson({{"x", 1}}, ops, ranks));
}

}  // namespace
}  // namespace genie::report
