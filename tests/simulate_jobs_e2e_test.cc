// `genie simulate --jobs`: two 8-rank jobs of a jobs file (an all-reduce and a shipped
// workload) on a star of 8 hosts. Interleaved, they share every host's links and the
// all-reduce is predicted slower together than alone; packed on disjoint hosts of the star,
// nothing changes; a traffic job over the all-reduce's hosts slows it; results.json says
// the same; a placement the network cannot hold is refused naming the job.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

class SimulateJobs : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_ + "/star8.yml") << "topology: [ Switch ]\nnpus_count: [ 8 ]\n"
                                          "bandwidth: [ 0.1 ]\nlatency: [ 30000 ]\n";
  }
  // A jobs file of the all-reduce `a` and the workload `b`, each with `placement`, plus `extra`.
  std::string Jobs(const std::string& name, const std::string& placement,
                   const std::string& extra = "") {
    const std::string path = dir_ + "/" + name + ".yml";
    std::ofstream(path)
        << "jobs:\n"
        << "  - name: a\n    ranks: 8\n    iterations: 3\n    placement: " << placement << "\n"
        << "    run: {workload: "
        << Data("traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce") << "}\n"
        << "  - name: b\n    ranks: 8\n    iterations: 2\n    placement: " << placement << "\n"
        << "    run: {workload: " << Data("traces/generated/stg/gpt_dp2_tp2_pp2") << "}\n"
        << extra;
    return path;
  }
  CliResult Simulate(const std::string& jobs, const std::string& more = "") {
    return RunGenie("simulate --jobs " + jobs + " --network " + dir_ + "/star8.yml " + more,
                    Stderr::kApart);
  }

  std::string dir_ = FreshDir("simulate_jobs");
};

// The row of job `name`: {together, alone, interference} as printed.
std::vector<std::string> Row(const std::string& out, const std::string& name) {
  std::regex row("\\n" + name +
                 " +\\d+ +\\S+ +\\S+ \\S+ +([\\d.]+ \\S+) +([\\d.]+ \\S+) +([\\d.]+ \\S+) \\(");
  std::smatch m;
  if (!std::regex_search(out, m, row)) return {};
  return {m[1], m[2], m[3]};
}

TEST_F(SimulateJobs, InterleavedJobsShareTheHostsLinks) {
  const std::string out_dir = dir_ + "/inter-out";
  CliResult r = Simulate(Jobs("inter", "interleaved"), "--output " + out_dir);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const auto a = Row(r.output, "a");
  ASSERT_EQ(a.size(), 3u) << r.output;
  EXPECT_NE(a[0], a[1]) << r.output;  // together differs from alone
  EXPECT_NE(a[2], "0 ns") << r.output;
  std::ifstream in(out_dir + "/results.json");
  ASSERT_TRUE(in) << r.errors;
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["jobs"].size(), 2u);
  const nlohmann::json& ja = doc["jobs"][0];
  EXPECT_EQ(ja["name"], "a");
  EXPECT_EQ(ja["rank_host"], nlohmann::json({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(ja["together_ns"].size(), 3u);
  EXPECT_GT(ja["together_step_ns"].get<int64_t>(), ja["alone_step_ns"].get<int64_t>());
  EXPECT_EQ(ja["interference_ns"].get<int64_t>(),
            ja["together_step_ns"].get<int64_t>() - ja["alone_step_ns"].get<int64_t>());
}

TEST_F(SimulateJobs, PackedOnDisjointHostsOfAStarTheyDoNotMeet) {
  CliResult r = Simulate(Jobs("packed", "packed"));
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const auto a = Row(r.output, "a"), b = Row(r.output, "b");
  ASSERT_EQ(a.size(), 3u) << r.output;
  ASSERT_EQ(b.size(), 3u) << r.output;
  EXPECT_NE(r.output.find("h0-h3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("h4-h7"), std::string::npos) << r.output;
  EXPECT_EQ(a[0], a[1]) << r.output;
  EXPECT_EQ(a[2], "0 ns") << r.output;
  EXPECT_EQ(b[2], "0 ns") << r.output;
}

TEST_F(SimulateJobs, ATrafficJobOnTheJobsHostsSlowsIt) {
  CliResult r = Simulate(Jobs("traffic", "packed",
                              "  - name: noise\n    type: traffic\n    pairs: [[h0, h2], [h1, h3]]\n"
                              "    duration: 10s\n"));
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  const auto a = Row(r.output, "a"), b = Row(r.output, "b");
  ASSERT_EQ(a.size(), 3u) << r.output;
  EXPECT_NE(a[2], "0 ns") << r.output;  // a is on h0-h3, where the traffic runs
  EXPECT_EQ(b[2], "0 ns") << r.output;  // b is on h4-h7
  EXPECT_NE(r.output.find("noise"), std::string::npos) << r.output;
}

TEST_F(SimulateJobs, APlacementTheNetworkCannotHoldIsRefusedNamingTheJob) {
  const std::string jobs = dir_ + "/big.yml";
  std::ofstream(jobs) << "jobs:\n  - name: wide\n    ranks: 8\n    placement: [h0, h9]\n"
                      << "    run: {workload: "
                      << Data("traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB/all_reduce")
                      << "}\n";
  CliResult r = Simulate(jobs);
  EXPECT_EQ(r.exit_code, 2) << r.output << r.errors;
  EXPECT_NE(r.errors.find("wide"), std::string::npos) << r.errors;
}

}  // namespace
}  // namespace genie::testing
