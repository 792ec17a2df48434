// Attribution end to end on a testbed, as root: `genie run --predict` on star:4 at 400 Mbit/s
// with a step of 150 ms of compute then a 2 MiB all-reduce. A compute fault on one rank makes
// that rank the straggler named for every iteration it slows (with the collective the others
// waited in); a slow link (a --faults rate fault) is named as the network's, at the host the
// probe localises, with no straggler; both at once are both named; a healthy run names nothing. The
// attribution reads the measurement only (docs/attribution.md): the schedule that caused each case
// is never read. Needs root; skips with a message otherwise. The testbed is taken down also when a
// check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "et_def.pb.h"
#include "genie/trace/attributes.h"
#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/suite_testbed.h"
#include "tests/support/switch_workload.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

constexpr int kRanks = 4;
constexpr int kIterations = 5;  // the faults hit at the start of 0-based iteration 2

// The cases share one testbed (SuiteTestbed; under ctest the fixture predict_e2e shares too):
// each fault comes and goes with its run's schedule.
class Attribution : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    testbed_.Up("at" + std::to_string(getpid()), "--topology star:4 --rate 400mbit");
  }
  static void TearDownTestSuite() { testbed_.Down(); }
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    GENIE_SKIP_IF(Sanitized("measured vs predicted times"));
    ASSERT_TRUE(testbed_.up()) << "testbed up failed: " << testbed_.up_error();
    name_ = testbed_.name();
    dir_ = FreshDir("attribution-" + name_);
    WriteWorkload(dir_ + "/w");
  }
  void TearDown() override { testbed_.ClearFaults(); }
  // Per rank: 150 ms of GPU compute, then a 2 MiB all-reduce that depends on it (~60 ms here).
  static void WriteWorkload(const std::string& prefix) {
    ChakraProtoMsg::Node comp;
    comp.set_id(0);
    comp.set_name("forward_backward");
    comp.set_type(ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(150'000);
    trace::AddBool(&comp, "is_cpu_op", false);
    ChakraProtoMsg::Node ar;
    ar.set_id(1);
    ar.set_name("grad_allreduce");
    ar.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    ar.add_data_deps(0);
    trace::AddBool(&ar, "is_cpu_op", false);
    trace::AddInt64(&ar, "comm_type", 0);  // ALL_REDUCE
    trace::AddInt64(&ar, "comm_size", 2 << 20);
    WriteEveryRank(prefix, kRanks, {comp, ar});
  }
  CliResult Run(const std::string& out, const std::string& faults, const std::string& args = "") {
    std::string cmd = "launch --testbed " + name_ + " -n 4 -- run " + dir_ + "/w -n " +
                      std::to_string(kIterations) + " --warmup 1 --predict -o " + dir_ + "/" + out +
                      " " + args;
    if (!faults.empty()) {
      std::ofstream(dir_ + "/" + out + ".yml") << "faults:\n  - " << faults << "\n";
      cmd += " --faults " + dir_ + "/" + out + ".yml";
    }
    return RunCli(Genie(cmd));
  }
  json Results(const std::string& out) {
    return json::parse(ReadFile(dir_ + "/" + out + "/results.json"));
  }
  // The attributed iterations from 0-based iteration 3 on (2 is in flight when a fault hits).
  static std::vector<json> After(const json& results) {
    std::vector<json> out;
    for (const auto& it : results["attribution"]["iterations"]) {
      if (it["iteration"].get<int>() >= 3) out.push_back(it);
    }
    return out;
  }
  static std::string Causes(const json& it) {
    std::string out;
    for (const auto& c : it["causes"]) {
      out += (out.empty() ? "" : " ") + c["cause"].get<std::string>();
    }
    return out;
  }

  static SuiteTestbed testbed_;
  std::string name_, dir_;
};
SuiteTestbed Attribution::testbed_;

TEST_F(Attribution, AStragglerIsNamedWithTheCollectiveTheOthersWaitedIn) {
  CliResult r = Run("straggler", "{iteration: 3, rank: 2, compute: 2x}");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = Results("straggler");
  const auto after = After(results);
  ASSERT_EQ(after.size(), 2u) << results["attribution"].dump(1);
  for (const json& it : after) {
    ASSERT_EQ(Causes(it), "straggler") << it.dump(1);
    const json& c = it["causes"][0];
    EXPECT_EQ(c["culprit"], "rank 2") << it.dump(1);
    // Its compute ~150 ms over the trace's, and most of the excess.
    EXPECT_NEAR(c["ranks"][0]["compute_excess_ns"].get<double>(), 150e6, 20e6) << it.dump(1);
    EXPECT_GT(c["share"].get<double>(), 0.8) << it.dump(1);
    EXPECT_EQ(c["waited_in"]["type"], "all_reduce") << it.dump(1);
    EXPECT_EQ(c["waited_in"]["waiting"], json({0, 1, 3})) << it.dump(1);
    EXPECT_GT(c["waited_in"]["wait_ns"].get<int64_t>(), 100'000'000) << it.dump(1);
  }
  EXPECT_NE(r.output.find("# who slowed the step"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("straggler"), std::string::npos) << r.output;
  // `genie results show` prints the same lines from the file.
  CliResult show = RunCli(Genie("results show " + dir_ + "/straggler/results.json"));
  ASSERT_EQ(show.exit_code, 0) << show.output;
  EXPECT_NE(show.output.find("rank 2: compute"), std::string::npos) << show.output;
}

TEST_F(Attribution, ASlowLinkIsTheNetworksAtTheLocalisedHostNotAStraggler) {
  CliResult r =
      Run("link", "{iteration: 3, link: h1, rate: 40mbit, direction: both}", "--localize");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = Results("link");
  const auto after = After(results);
  ASSERT_EQ(after.size(), 2u) << results["attribution"].dump(1);
  for (const json& it : after) {
    ASSERT_EQ(Causes(it), "network") << it.dump(1);
    const json& c = it["causes"][0];
    EXPECT_NE(c["culprit"].get<std::string>().find("h1"), std::string::npos) << it.dump(1);
    EXPECT_GT(c["share"].get<double>(), 0.8) << it.dump(1);
    EXPECT_EQ(c["ops_behind"][0]["type"], "all_reduce") << it.dump(1);
  }
}

// Both at once, on different hosts: each is named with about its own share of the excess.
TEST_F(Attribution, AStragglerTogetherWithASlowLinkAreBothNamed) {
  CliResult r = Run("both",
                    "{iteration: 3, rank: 3, compute: 2x}\n"
                    "  - {iteration: 3, link: h1, rate: 100mbit, direction: in}",
                    "--localize");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = Results("both");
  const auto after = After(results);
  ASSERT_EQ(after.size(), 2u) << results["attribution"].dump(1);
  for (const json& it : after) {
    const std::string causes = Causes(it);
    EXPECT_TRUE(causes == "network straggler" || causes == "straggler network") << it.dump(1);
    for (const auto& c : it["causes"]) {
      if (c["cause"] == "straggler") {
        EXPECT_EQ(c["culprit"], "rank 3") << it.dump(1);
      } else {
        EXPECT_NE(c["culprit"].get<std::string>().find("h1"), std::string::npos) << it.dump(1);
      }
      // ~150 ms each of ~300 ms.
      EXPECT_GT(c["share"].get<double>(), 0.3) << it.dump(1);
    }
  }
}

TEST_F(Attribution, AHealthyRunNamesNothing) {
  CliResult r = Run("healthy", "");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json results = Results("healthy");
  ASSERT_TRUE(results.contains("attribution")) << r.output;
  EXPECT_TRUE(results["attribution"]["iterations"].empty()) << results["attribution"].dump(1);
  EXPECT_EQ(r.output.find("# who slowed the step"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace genie::testing
