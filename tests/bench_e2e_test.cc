// genie bench end to end: ranks started by genie launch (and mpiexec) on loopback print
// nccl-tests' table with real data checks; --check catches corrupted results; --min-busbw and
// --expect set the exit code; --json parses. One test on a namespace testbed (root only)
// compares bench's busbw at 64 MiB with `genie run`'s for the same all-reduce.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// The table's rows: every line that is not a comment, split on whitespace.
std::vector<std::vector<std::string>> Rows(const std::string& output) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("genie", 0) == 0) continue;
    std::istringstream in(line);
    std::vector<std::string> fields;
    for (std::string f; in >> f;) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

// The footer's figure, -1 when there is none.
double AvgBusBw(const std::string& output) {
  const std::string key = "# Avg bus bandwidth    : ";
  const size_t at = output.find(key);
  return at == std::string::npos ? -1 : std::stod(output.substr(at + key.size()));
}

// Columns of a row (nccl-tests' order, then genie's jitter).
enum Col { kSize, kCount, kType, kRedop, kRoot, kTime, kAlgbw, kBusbw, kWrong, kMin, kP99, kMax };

TEST(Bench, FourRanksPrintNcclTestsTableAndJson) {
  const std::string dir = FreshDir("bench-table");
  CliResult r =
      RunCli(Genie("launch -n 4 -- bench -b 1K -e 64K -f 4 -n 3 -w 1 --json " + dir + "/b.json"),
             Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  // The header says what ran and that one group stands for in-place and out-of-place.
  EXPECT_NE(r.output.find("# genie bench: all_reduce, 4 ranks, algorithm ring"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("in-place = out-of-place"), std::string::npos);
  EXPECT_NE(r.output.find("#       size         count      type   redop    root     time   algbw"
                          "   busbw  #wrong"),
            std::string::npos)
      << r.output;
  auto rows = Rows(r.output);
  ASSERT_EQ(rows.size(), 4u) << r.output;
  const char* sizes[] = {"1024", "4096", "16384", "65536"};
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), 12u) << r.output;
    EXPECT_EQ(rows[i][kSize], sizes[i]);
    EXPECT_EQ(std::stoull(rows[i][kCount]), std::stoull(sizes[i]) / 4);
    EXPECT_EQ(rows[i][kType], "float");
    EXPECT_EQ(rows[i][kRedop], "sum");
    EXPECT_EQ(rows[i][kRoot], "-1");
    EXPECT_EQ(rows[i][kWrong], "0") << "the data check found wrong values:\n" << r.output;
    const double t = std::stod(rows[i][kTime]), algbw = std::stod(rows[i][kAlgbw]),
                 busbw = std::stod(rows[i][kBusbw]);
    EXPECT_GT(t, 0);
    // nccl-tests: algbw = size / time, busbw = 2(n-1)/n x algbw for all-reduce.
    EXPECT_NEAR(algbw, std::stod(sizes[i]) / t / 1e3, algbw * 0.02 + 1e-4) << r.output;
    EXPECT_NEAR(busbw, algbw * 1.5, busbw * 0.02 + 1e-4) << r.output;
    EXPECT_LE(std::stod(rows[i][kMin]), std::stod(rows[i][kP99]));
    EXPECT_LE(std::stod(rows[i][kP99]), std::stod(rows[i][kMax]));
  }
  EXPECT_NE(r.output.find("# Out of bounds values : 0 OK"), std::string::npos) << r.output;
  const double avg = AvgBusBw(r.output);
  EXPECT_GT(avg, 0) << r.output;
  json j = json::parse(ReadFile(dir + "/b.json"));
  ASSERT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][3]["size"], 65536);
  EXPECT_EQ(j["rows"][3]["wrong"], 0);
  EXPECT_EQ(j["wrong"], 0);
  EXPECT_NEAR(j["avg_busbw_gbps"].get<double>(), avg, avg * 1e-4);
  EXPECT_EQ(j["info"]["ranks"], 4);
  EXPECT_EQ(j["verdict"]["pass"], true);
}

TEST(Bench, EveryCollectiveMovesTheRightDataWithItsSizeMeaning) {
  // Size = nccl-tests' whole buffer: all-gather's count is one rank's share.
  struct Case {
    const char* collective;
    const char* count;
    const char* redop;
    const char* root;
  };
  for (const Case& c :
       {Case{"all_gather", "256", "none", "-1"}, Case{"reduce_scatter", "256", "sum", "-1"},
        Case{"all_to_all", "256", "none", "-1"}, Case{"broadcast", "1024", "none", "2"},
        Case{"reduce", "1024", "sum", "2"}, Case{"gather", "256", "none", "2"},
        Case{"scatter", "256", "none", "2"}}) {
    CliResult r = RunCli(
        Genie(std::string("launch -n 4 -- bench ") + c.collective + " -b 4K -e 4K -n 2 -w 1 -r 2"),
        Stderr::kApart);
    ASSERT_EQ(r.exit_code, 0) << c.collective << "\n" << r.output << r.errors;
    auto rows = Rows(r.output);
    ASSERT_EQ(rows.size(), 1u) << r.output;
    ASSERT_EQ(rows[0].size(), 12u) << r.output;
    EXPECT_EQ(rows[0][kSize], "4096") << c.collective;
    EXPECT_EQ(rows[0][kCount], c.count) << c.collective;
    EXPECT_EQ(rows[0][kRedop], c.redop) << c.collective;
    EXPECT_EQ(rows[0][kRoot], c.root) << c.collective;
    EXPECT_EQ(rows[0][kWrong], "0") << c.collective << "\n" << r.output;
  }
}

TEST(Bench, AnyPlannerAlgorithmMovesTheRightData) {
  for (const char* algorithm :
       {"direct", "halvingDoubling", "doubleBinaryTree", "ring,direct --topology 2x2"}) {
    CliResult r = RunCli(Genie(std::string("launch -n 4 -- bench -b 64K -e 64K -n 2 --channels 2 "
                                           "--algorithm ") +
                               algorithm),
                         Stderr::kApart);
    ASSERT_EQ(r.exit_code, 0) << algorithm << "\n" << r.output << r.errors;
    auto rows = Rows(r.output);
    ASSERT_EQ(rows.size(), 1u) << r.output;
    EXPECT_EQ(rows[0][kWrong], "0") << algorithm << "\n" << r.output;
  }
}

// Counts that do not divide by the ranks (3 ranks, 1 KiB = 256 floats) check clean: the
// planner cuts whole elements (it cut bytes, and every element came out wrong).
TEST(Bench, OddRankCountsWithUnevenCountsCheckClean) {
  CliResult r = RunCli(Genie("launch -n 3 -- bench -b 1K -e 4K -f 2 -n 1 -w 0"), Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  auto rows = Rows(r.output);
  ASSERT_EQ(rows.size(), 3u) << r.output;
  for (const auto& row : rows) EXPECT_EQ(row[kWrong], "0") << r.output;
}

TEST(Bench, CheckCountsCorruptedElementsAndFails) {
  // The test hook spoils one element of rank 2's result per size before the check.
  CliResult r = RunCli(
      "GENIE_BENCH_TEST_CORRUPT_RANK=2 " + Genie("launch -n 4 -- bench -b 1K -e 4K -f 2 -n 1 -w 0"),
      Stderr::kApart);
  EXPECT_EQ(r.exit_code, 1) << r.output << r.errors;
  auto rows = Rows(r.output);
  ASSERT_EQ(rows.size(), 3u) << r.output;
  for (const auto& row : rows) EXPECT_EQ(row[kWrong], "1") << r.output;
  EXPECT_NE(r.output.find("# Out of bounds values : 3 FAILED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("# FAILED: #wrong: 3 element(s)"), std::string::npos) << r.output;
  // Without -c nothing is checked, so nothing fails.
  r = RunCli(
      "GENIE_BENCH_TEST_CORRUPT_RANK=2 " + Genie("launch -n 4 -- bench -b 1K -e 1K -n 1 -w 0 -c 0"),
      Stderr::kApart);
  EXPECT_EQ(r.exit_code, 0) << r.output << r.errors;
  ASSERT_EQ(Rows(r.output).size(), 1u) << r.output;
  EXPECT_EQ(Rows(r.output)[0][kWrong], "N/A");
}

TEST(Bench, MinBusBwAndExpectSetTheExitCode) {
  const std::string dir = FreshDir("bench-verdict");
  const std::string run = Genie("launch -n 2 -- bench -b 256K -e 256K -n 2 -w 1 ");
  CliResult ok = RunCli(run + "--min-busbw 0.000001", Stderr::kApart);
  EXPECT_EQ(ok.exit_code, 0) << ok.output << ok.errors;
  EXPECT_NE(ok.output.find("# PASSED"), std::string::npos) << ok.output;
  CliResult low = RunCli(run + "--min-busbw 100000 --json " + dir + "/v.json", Stderr::kApart);
  EXPECT_EQ(low.exit_code, 1) << low.output << low.errors;
  EXPECT_NE(low.output.find("# FAILED: Avg bus bandwidth"), std::string::npos) << low.output;
  json j = json::parse(ReadFile(dir + "/v.json"));
  EXPECT_EQ(j["verdict"]["pass"], false);
  EXPECT_EQ(j["verdict"]["min_busbw_gbps"], 100000);
  // nccl-tests' variable works too.
  CliResult env = RunCli("NCCL_TESTS_MIN_BW=100000 " + run, Stderr::kApart);
  EXPECT_EQ(env.exit_code, 1) << env.output << env.errors;
  // Loopback does not reach 10 Tbit/s.
  CliResult expect = RunCli(run + "--expect 10tbit", Stderr::kApart);
  EXPECT_EQ(expect.exit_code, 1) << expect.output << expect.errors;
  EXPECT_NE(expect.output.find("(--expect)"), std::string::npos) << expect.output;
  EXPECT_EQ(RunCli(run + "--expect 1kbit").exit_code, 0);
}

TEST(Bench, BadInputExitsTwoNamingTheFlag) {
  CliResult op = RunCli(Genie("launch -n 2 -- bench -o max -b 1K -e 1K"));
  EXPECT_EQ(op.exit_code, 2) << op.output;
  EXPECT_NE(op.output.find("-o 'max'"), std::string::npos) << op.output;
  CliResult alone = RunCli(Genie("bench -b 1K -e 1K"));
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  EXPECT_NE(alone.output.find("genie launch -n 4 -- bench"), std::string::npos) << alone.output;
  CliResult ranks = RunCli(Genie("bench --ranks 2 -b 1K -e 2K -f 2 -n 1"), Stderr::kApart);
  EXPECT_EQ(ranks.exit_code, 0) << ranks.output << ranks.errors;
  EXPECT_EQ(Rows(ranks.output).size(), 2u) << ranks.output;
}

TEST(Bench, RunsUnderMpiexec) {
  GENIE_SKIP_IF(ToolMissing("mpiexec.mpich", "mpich"));
  CliResult r = RunCli("mpiexec.mpich -n 3 " + GenieBinary() +
                           " bench all_gather -b 12K -e 12K -n 2 --rendezvous tcp:127.0.0.1:" +
                           std::to_string(FreeTcpPort()),
                       Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  EXPECT_NE(r.output.find("all_gather, 3 ranks"), std::string::npos) << r.output;
  auto rows = Rows(r.output);
  ASSERT_EQ(rows.size(), 1u) << r.output;
  EXPECT_EQ(rows[0][kWrong], "0") << r.output;
}

// ---- on a namespace testbed (root) ---------------------------------------------------------

class BenchOnTestbed : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    name_ = "b" + std::to_string(getpid());
    dir_ = FreshDir("bench-testbed-" + name_);
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  std::string name_, dir_;
};

// The same all-reduce timed by `genie bench` and by `genie run` agrees: a sanity band that a
// wrong timer or busbw factor (1.5x at 4 ranks) falls out of, wide enough for a machine shared
// with parallel tests. The 5 % figure is measured quietly by bench/bench_vs_run.sh.
TEST_F(BenchOnTestbed, BusBwAt64MiBMatchesGenieRun) {
  GENIE_SKIP_IF(Sanitized("bandwidth comparisons"));
  CliResult up = RunCli(Genie("testbed up --name " + name_ + " --topology star:4 --rate 400mbit"));
  ASSERT_EQ(up.exit_code, 0) << up.output;
  ASSERT_EQ(
      RunCli(Genie("gen collective --type all_reduce --size 64MiB --ranks 4 -o " + dir_ + "/w"))
          .exit_code,
      0);
  // One timed iteration each (2.1 s at 400 Mbit/s), no warm-up: the test stays short (a first
  // iteration on fresh connections measured within 1 % of later ones here). The pair is
  // measured again once if it disagrees: on a machine shared with builds, a rank that loses
  // its core for a while slows one measurement by up to 25 % (seen at load average 6 on 2 cores).
  double bench_busbw = 0, run_busbw = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const std::string out = dir_ + "/" + std::to_string(attempt);
    CliResult bench = RunCli(Genie("launch --testbed " + name_ +
                                   " -n 4 -- bench -b 64M -e 64M "
                                   "-n 1 -w 0 -c 0 --json " +
                                   out + "-bench.json"),
                             Stderr::kApart);
    ASSERT_EQ(bench.exit_code, 0) << bench.output << bench.errors;
    EXPECT_NE(bench.output.find("testbed " + name_), std::string::npos) << bench.output;
    bench_busbw = json::parse(ReadFile(out + "-bench.json"))["rows"][0]["busbw_gbps"].get<double>();
    CliResult run = RunCli(Genie("launch --testbed " + name_ + " -n 4 -- run " + dir_ + "/w -o " +
                                 out + "-run --iterations 1 --warmup 0"));
    ASSERT_EQ(run.exit_code, 0) << run.output;
    // genie run's busbw of the measured iteration: its slowest rank's.
    run_busbw = 1e18;
    const json results = json::parse(ReadFile(out + "-run/results.json"));
    for (const auto& c : results["collectives"]) {
      if (c["iteration"].get<int>() == 0) {
        run_busbw = std::min(run_busbw, c["busbw_gbps"].get<double>());
      }
    }
    ASSERT_LT(run_busbw, 1e18);
    std::cout << "star:4 at 400mbit, 64 MiB ring all-reduce: bench busbw " << bench_busbw
              << " GB/s, run busbw " << run_busbw << " GB/s, ratio " << bench_busbw / run_busbw
              << "\n";
    if (std::fabs(bench_busbw / run_busbw - 1.0) <= 0.05) break;
  }
  RecordProperty("bench_over_run", std::to_string(bench_busbw / run_busbw));
  EXPECT_NEAR(bench_busbw / run_busbw, 1.0, 0.2);
  // And the link is what limits both: about 0.95 x 400 Mbit/s.
  EXPECT_GT(bench_busbw, 0.8 * 0.05);
}

}  // namespace
}  // namespace genie::testing
