// `genie run --predict` on a leaf-spine testbed, as root: leafspine:2x1x4 at 400 Mbit/s with
// the leaf-spine links at half that (--spine-rate 200mbit, 16 MB queues), so the hosts of a leaf
// contend for their leaf's one uplink — contention the flow model must see. An all-reduce and an
// all-to-all are measured beside the flow model on the testbed's description (the fabric keys:
// spines, spine_bandwidth, ...) and must be within ±15 %; the same run predicted on the old
// 2-D description (ASTRA-sim's [Switch 4, Switch 2], dimension 1 the uplink's share per rank,
// no shared uplink) is printed beside it, and for the all-reduce is much further off.
// Needs root; skips with a message otherwise. The testbed is taken down also when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

constexpr int kIterations = 6;      // the leaf-spine description's runs, judged within 15 %
constexpr int kFlatIterations = 1;  // the 2-D description's, judged far off

class PredictLeafSpine : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    GENIE_SKIP_IF(Sanitized("measured vs predicted times"));
    name_ = "p" + std::to_string(getpid());
    dir_ = FreshDir("predict-ls-" + name_);
    // Queues of 16 MB: with the default 2 MB (80 ms at 200 Mbit/s) the all-to-all's 16 flows
    // into one uplink overflow it and retransmit (~8 % of h7's segments), and TCP's loss
    // recovery, which the model leaves out, adds 10-25 %; with room they share it as modelled.
    CliResult up = RunCli(Genie("testbed up --name " + name_ +
                                " --topology leafspine:2x1x4 --rate 400mbit --spine-rate 200mbit "
                                "--queue 16MB"));
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }

  // The testbed's description without the flow model's fabric keys: what genie wrote before
  // (dimension 1 = each rank's share of its leaf's uplinks).
  std::string TwoDimensional() {
    CliResult yml = RunCli(Genie("testbed network-yml " + name_), Stderr::kApart);
    EXPECT_EQ(yml.exit_code, 0) << yml.output << yml.errors;
    EXPECT_NE(yml.output.find("spines: 1\n"), std::string::npos) << yml.output;
    std::istringstream in(yml.output);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("spine", 0) == 0 || line.rfind("ecmp", 0) == 0) continue;
      out += line + "\n";
    }
    const std::string path = dir_ + "/two_d.yml";
    std::ofstream(path) << out;
    return path;
  }

  // Median over the measured iterations of measured / expected step, from results.json.
  static double MedianRatio(const json& comparison) {
    std::vector<double> r;
    for (const auto& it : comparison["iterations"]) r.push_back(it["ratio"].get<double>());
    if (r.empty()) return 0;
    std::sort(r.begin(), r.end());
    return (r[(r.size() - 1) / 2] + r[r.size() / 2]) / 2;
  }

  std::string Gen(const std::string& type, const std::string& size) {
    const std::string w = dir_ + "/w-" + type;
    CliResult g =
        RunCli(Genie("gen collective --type " + type + " --size " + size + " --ranks 8 -o " + w));
    EXPECT_EQ(g.exit_code, 0) << g.output;
    return w;
  }

  // A run of workload `w` on the testbed with --predict and `extra` (a flat plan over the 8
  // ranks either way), `iterations` measured; returns results.json's prediction.
  json Run(const std::string& w, const std::string& out, const std::string& extra,
           int iterations = kIterations) {
    CliResult r = RunCli(Genie("launch --testbed " + name_ + " -n 8 -- run " + w + " -n " +
                               std::to_string(iterations) + " --warmup 1 --predict -o " + dir_ +
                               "/" + out + " " + extra));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0) return json();
    return json::parse(ReadFile(dir_ + "/" + out + "/results.json"))["prediction"];
  }

  std::string name_, dir_;
};

TEST_F(PredictLeafSpine, TheFlowModelSeesTheSharedUplink) {
  const std::string two_d = TwoDimensional();
  // Direct all-to-all (every message at once): the 4 hosts of a leaf each send 4 messages to
  // the other leaf, 16 at once through the leaf's one uplink — the sharing the model must see.
  // ASTRA-sim's defaults otherwise (ring for the others, one chunk, LIFO).
  const std::string system = dir_ + "/direct.json";
  std::ofstream(system) << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": 1, "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "baseline", "local-mem-bw": 50, "boost-mode": 0})";
  struct Case {
    const char* type;
    const char* size;
    std::string args;
  };
  // 16 MiB ring all-reduce: the ring crosses the fabric twice (h3 -> h4, h7 -> h0), one flow on
  // each direction of the spine at half the host rate; the 2-D description gives that flow a
  // quarter of the uplink (each rank's share), four times too slow. 4 MiB direct all-to-all:
  // 16 messages leave each leaf at once through its 200 Mbit/s uplink; dimension-order routing
  // happens to spread them evenly over the 2-D description's per-rank links, so that one
  // predicts the same there (printed, not judged).
  for (const Case& c :
       {Case{"all_reduce", "16MiB", ""}, Case{"all_to_all", "4MiB", "--system " + system}}) {
    const std::string w = Gen(c.type, c.size);
    const json fabric = Run(w, std::string(c.type) + "-ls", c.args);
    // The 2-D description's run only has to show its prediction far off (all-reduce: measured
    // / predicted ~0.25 against the bound 0.6, a margin no noise of a step closes: the step
    // would have to take 2.4x as long): one measured iteration, not 6, saves 8 s of a test that
    // runs alone.
    const json flat = Run(w, std::string(c.type) + "-2d",
                          c.args + " --network " + two_d + " --topology 8", kFlatIterations);
    ASSERT_FALSE(fabric.is_null()) << c.type;
    ASSERT_FALSE(flat.is_null()) << c.type;
    EXPECT_NE(fabric.value("source", std::string()).find("flow model on testbed " + name_),
              std::string::npos)
        << fabric.dump(1);
    const double ls = MedianRatio(fabric), old = MedianRatio(flat);
    const json& it = fabric["iterations"][0];
    const json& it2 = flat["iterations"][0];
    std::cout << "leafspine:2x1x4, 400 Mbit/s hosts, 200 Mbit/s leaf-spine links, " << c.type << " "
              << c.size << ": measured " << it["measured_step_ns"].get<double>() / 1e6
              << " ms, leaf-spine flow model " << it["expected_step_ns"].get<double>() / 1e6
              << " ms (median measured / predicted " << ls << "); 2-D description "
              << it2["expected_step_ns"].get<double>() / 1e6 << " ms (its run measured "
              << it2["measured_step_ns"].get<double>() / 1e6 << " ms, median ratio " << old
              << ")\n";
    EXPECT_GT(ls, 0.85) << fabric.dump(1);
    EXPECT_LT(ls, 1.15) << fabric.dump(1);
    if (std::string(c.type) == "all_reduce") {
      EXPECT_LT(old, 0.6) << flat.dump(1);
    }
  }
}

}  // namespace
}  // namespace genie::testing
