#include "genie/report/bench_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::report {
namespace {

using CT = CollectiveType;

BenchInfo Info(CT type, int ranks) {
  BenchInfo info;
  info.type = type;
  info.ranks = ranks;
  info.iters = 4;
  info.warmup = 1;
  info.check = true;
  return info;
}

// A row whose ranks' times are the means of their iterations.
BenchRow Row(const BenchInfo& info, Bytes size, const std::vector<std::vector<double>>& t,
             int64_t wrong) {
  std::vector<double> rank_us;
  for (const auto& v : t) {
    double sum = 0;
    for (double x : v) sum += x;
    rank_us.push_back(sum / static_cast<double>(v.size()));
  }
  return MakeBenchRow(info, size, rank_us, t, wrong);
}

std::vector<std::string> Fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

TEST(BenchTableTest, CountIsPerRankForTheShareCollectivesAsInNcclTests) {
  // 1 MiB of floats over 4 ranks.
  EXPECT_EQ(BenchCount(CT::kAllReduce, 1 << 20, 4, 4), 262144u);
  EXPECT_EQ(BenchCount(CT::kBroadcast, 1 << 20, 4, 4), 262144u);
  EXPECT_EQ(BenchCount(CT::kReduce, 1 << 20, 4, 4), 262144u);
  EXPECT_EQ(BenchCount(CT::kAllGather, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(BenchCount(CT::kReduceScatter, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(BenchCount(CT::kAllToAll, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(BenchCount(CT::kGather, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(BenchCount(CT::kScatter, 1 << 20, 4, 4), 65536u);
  EXPECT_EQ(BenchCount(CT::kAllReduce, 1 << 20, 8, 4), 131072u);  // double
  EXPECT_EQ(BenchRedop(CT::kAllReduce, "sum"), "sum");
  EXPECT_EQ(BenchRedop(CT::kAllGather, "sum"), "none");
  EXPECT_EQ(BenchRoot(CT::kAllReduce, 2), -1);
  EXPECT_EQ(BenchRoot(CT::kBroadcast, 2), 2);
}

TEST(BenchTableTest, BusBwFactorsPerCollective) {
  // 1,000,000 B in 1,000 µs = 1 GB/s algbw on 4 ranks.
  const std::vector<std::vector<double>> t = {{1000}, {1000}, {1000}, {1000}};
  struct Case {
    CT type;
    double factor;
  };
  for (const Case& c :
       {Case{CT::kAllReduce, 1.5}, Case{CT::kAllGather, 0.75}, Case{CT::kReduceScatter, 0.75},
        Case{CT::kAllToAll, 0.75}, Case{CT::kGather, 0.75}, Case{CT::kScatter, 0.75},
        Case{CT::kBroadcast, 1.0}, Case{CT::kReduce, 1.0}}) {
    BenchRow row = Row(Info(c.type, 4), 1'000'000, t, 0);
    EXPECT_DOUBLE_EQ(row.time_us, 1000) << CollectiveTypeName(c.type);
    EXPECT_DOUBLE_EQ(row.algbw_gbps, 1.0) << CollectiveTypeName(c.type);
    EXPECT_DOUBLE_EQ(row.busbw_gbps, c.factor) << CollectiveTypeName(c.type);
  }
}

TEST(BenchTableTest, TimeAcrossRanksFollowsDashA) {
  // Rank times: 100, 200, 300, 400 µs (their loops over the iterations, not the iterations).
  const std::vector<std::vector<double>> t = {{10, 10}, {20, 20}, {30, 30}, {40, 40}};
  const std::vector<double> us = {100, 200, 300, 400};
  BenchInfo info = Info(CT::kAllReduce, 4);
  info.average = BenchAverage::kRank0;
  EXPECT_DOUBLE_EQ(MakeBenchRow(info, 4096, us, t, 0).time_us, 100);
  info.average = BenchAverage::kMean;
  EXPECT_DOUBLE_EQ(MakeBenchRow(info, 4096, us, t, 0).time_us, 250);
  info.average = BenchAverage::kMin;
  EXPECT_DOUBLE_EQ(MakeBenchRow(info, 4096, us, t, 0).time_us, 100);
  info.average = BenchAverage::kMax;
  EXPECT_DOUBLE_EQ(MakeBenchRow(info, 4096, us, t, 0).time_us, 400);
}

TEST(BenchTableTest, JitterTakesTheSlowestRankOfEachIteration) {
  // Iteration i's slowest rank: 30, 10, 50, 20 -> min 10, max 50; p99 of 4 values is the max.
  const std::vector<std::vector<double>> t = {{30, 5, 50, 20}, {10, 10, 40, 1}};
  BenchRow row = Row(Info(CT::kAllReduce, 2), 4096, t, 0);
  EXPECT_DOUBLE_EQ(row.min_us, 10);
  EXPECT_DOUBLE_EQ(row.max_us, 50);
  EXPECT_DOUBLE_EQ(row.p99_us, 50);
  // 200 iterations 1..200: nearest-rank p99 is the 198th value.
  std::vector<double> many;
  for (int i = 200; i >= 1; --i) many.push_back(i);
  row = Row(Info(CT::kAllReduce, 1), 4096, {many}, 0);
  EXPECT_DOUBLE_EQ(row.p99_us, 198);
  EXPECT_DOUBLE_EQ(row.min_us, 1);
}

TEST(BenchTableTest, TableHasNcclTestsColumnsAndFooter) {
  BenchInfo info = Info(CT::kAllGather, 4);
  info.min_bytes = 1024;
  info.max_bytes = 4096;
  info.step_factor = 2;
  const std::string header = BenchHeaderText(info);
  EXPECT_NE(header.find("in-place = out-of-place"), std::string::npos) << header;
  EXPECT_NE(header.find("in-place and out-of-place are the same"), std::string::npos);
  EXPECT_NE(header.find("step: 2(factor)"), std::string::npos) << header;
  // The column names line, in nccl-tests' order, then genie's jitter.
  std::istringstream lines(header);
  std::string line, names;
  while (std::getline(lines, line)) {
    if (line.find("#wrong") != std::string::npos) names = line;
  }
  EXPECT_EQ(Fields(names),
            (std::vector<std::string>{"#", "size", "count", "type", "redop", "root", "time",
                                      "algbw", "busbw", "#wrong", "min", "p99", "max"}));
  std::vector<BenchRow> rows = {
      Row(info, 1024, {{100}, {100}, {100}, {100}}, 0),
      Row(info, 4096, {{100}, {100}, {100}, {100}}, 3),
  };
  // One row: 12 whitespace-separated fields, right-aligned under the names.
  const std::string row = BenchRowText(info, rows[1]);
  EXPECT_EQ(Fields(row),
            (std::vector<std::string>{"4096", "256", "float", "none", "-1", "100.0", "0.0410",
                                      "0.0307", "3", "100.0", "100.0", "100.0"}));
  EXPECT_EQ(row.size(), names.size() + 1) << "row and header widths differ:\n"
                                          << names << "\n"
                                          << row;
  EXPECT_EQ(row.find("#wrong"), std::string::npos);
  EXPECT_EQ(names.find("#wrong") + 6, row.find("     3") + 6);  // #wrong right-aligned
  const std::string footer = BenchFooterText(info, rows);
  EXPECT_NE(footer.find("# Out of bounds values : 3 FAILED"), std::string::npos) << footer;
  EXPECT_NE(footer.find("# Avg bus bandwidth    : 0.0192"), std::string::npos) << footer;
  rows[1].wrong = -1;
  EXPECT_NE(BenchFooterText(info, rows).find(": 0 OK"), std::string::npos);
  rows[0].wrong = -1;
  EXPECT_NE(BenchRowText(info, rows[0]).find(" N/A "), std::string::npos);
  info.check = false;
  EXPECT_NE(BenchFooterText(info, rows).find("N/A (not checked: -c 0)"), std::string::npos);
}

TEST(BenchTableTest, TimesAndBandwidthsKeepTheirWidths) {
  BenchInfo info = Info(CT::kAllReduce, 2);
  BenchRow row;
  row.size = 8;
  for (double t : {1.5, 150.0, 15000.0, 1.5e7}) {
    for (double bw : {0.001, 1.5, 150.0}) {
      row.time_us = row.min_us = row.p99_us = row.max_us = t;
      row.algbw_gbps = row.busbw_gbps = bw;
      EXPECT_EQ(Fields(BenchRowText(info, row)).size(), 12u) << BenchRowText(info, row);
      if (t < 1e7) {
        EXPECT_EQ(BenchRowText(info, row).size(), 113u) << BenchRowText(info, row);
      }
    }
  }
}

TEST(BenchTableTest, JsonCarriesRowsFooterAndVerdict) {
  BenchInfo info = Info(CT::kAllReduce, 4);
  std::vector<BenchRow> rows = {Row(info, 1'000'000, {{1000}, {1000}, {1000}, {1000}}, 0),
                                Row(info, 2'000'000, {{1000}, {1000}, {1000}, {1000}}, -1)};
  nlohmann::json j = BenchJson(info, rows, {{"pass", true}});
  EXPECT_EQ(j["info"]["collective"], "all_reduce");
  EXPECT_EQ(j["info"]["ranks"], 4);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0]["size"], 1'000'000);
  EXPECT_DOUBLE_EQ(j["rows"][0]["busbw_gbps"].get<double>(), 1.5);
  EXPECT_EQ(j["rows"][0]["wrong"], 0);
  EXPECT_TRUE(j["rows"][1]["wrong"].is_null());
  EXPECT_DOUBLE_EQ(j["avg_busbw_gbps"].get<double>(), 2.25);
  EXPECT_EQ(j["wrong"], 0);
  EXPECT_EQ(j["verdict"]["pass"], true);
  EXPECT_EQ(TotalWrong({}), -1);
  EXPECT_EQ(AvgBusBw({}), 0);
}

}  // namespace
}  // namespace genie::report
