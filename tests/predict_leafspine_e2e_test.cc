// `genie run --predict` on a leaf-spine testbed, as root: leafspine:2x1x4 at 400 Mbit/s with
// the leaf-spine links at half that (--spine-rate 200mbit), so the hosts of a leaf contend for
// their leaf's one uplink — contention the flow model must see. An all-reduce and an
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

namespace genie::testing {
namespace {

using nlohmann::json;

constexpr int kIterations = 4;

class PredictLeafSpine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to build a testbed (network namespaces)";
    if (RunCli("ip netns list 2>/dev/null").exit_code != 0) {
      GTEST_SKIP() << "no network namespaces here";
    }
    if (kSanitizedBuild) GTEST_SKIP() << "measured vs predicted times mean nothing under ASan";
    name_ = "p" + std::to_string(getpid());
    dir_ = FreshDir("predict-ls-" + name_);
    CliResult up = RunCli(Genie("testbed up --name " + name_ +
                                " --topology leafspine:2x1x4 --rate 400mbit --spine-rate 200mbit"));
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  static std::string Genie(const std::string& args) { return GenieBinary() + " " + args; }

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
    return r[r.size() / 2];
  }

  std::string Gen(const std::string& type, const std::string& size) {
    const std::string w = dir_ + "/w-" + type;
    CliResult g =
        RunCli(Genie("gen collective --type " + type + " --size " + size + " --ranks 8 -o " + w));
    EXPECT_EQ(g.exit_code, 0) << g.output;
    return w;
  }

  // A run of workload `w` on the testbed with --predict and `extra` (a flat plan over the 8
  // ranks either way); returns results.json's prediction.
  json Run(const std::string& w, const std::string& out, const std::string& extra) {
    CliResult r = RunCli(Genie("launch --testbed " + name_ + " -n 8 -- run " + w + " -n " +
                               std::to_string(kIterations) + " --warmup 1 --predict -o " + dir_ +
                               "/" + out + " " + extra));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    if (r.exit_code != 0) return json();
    return json::parse(ReadFile(dir_ + "/" + out + "/results.json"))["prediction"];
  }

  std::string name_, dir_;
};

TEST_F(PredictLeafSpine, TheFlowModelSeesTheSharedUplink) {
  const std::string two_d = TwoDimensional();
  // 8 MiB ring all-reduce: the ring crosses the fabric twice (h3 -> h4, h7 -> h0), each
  // direction of the one spine carrying one flow at half the host rate. 4 MiB all-to-all: 16
  // messages of 512 KiB leave each leaf through its one 200 Mbit/s uplink.
  for (const auto& [type, size] :
       {std::pair{"all_reduce", "8MiB"}, std::pair{"all_to_all", "4MiB"}}) {
    const std::string w = Gen(type, size);
    const json fabric = Run(w, std::string(type) + "-ls", "");
    const json flat = Run(w, std::string(type) + "-2d", "--network " + two_d + " --topology 8");
    ASSERT_FALSE(fabric.is_null()) << type;
    ASSERT_FALSE(flat.is_null()) << type;
    EXPECT_NE(fabric.value("source", std::string()).find("flow model on testbed " + name_),
              std::string::npos)
        << fabric.dump(1);
    const double ls = MedianRatio(fabric), old = MedianRatio(flat);
    const json& it = fabric["iterations"][0];
    const json& it2 = flat["iterations"][0];
    std::cout << "leafspine:2x1x4, 400 Mbit/s hosts, 200 Mbit/s spine links, " << type << " "
              << size << ": measured " << it["measured_step_ns"].get<double>() / 1e6
              << " ms; leaf-spine flow model " << it["expected_step_ns"].get<double>() / 1e6
              << " ms (measured / predicted " << ls << "); 2-D description "
              << it2["expected_step_ns"].get<double>() / 1e6 << " ms (measured "
              << it2["measured_step_ns"].get<double>() / 1e6 << " ms, ratio " << old << ")\n";
    EXPECT_GT(ls, 0.85) << fabric.dump(1);
    EXPECT_LT(ls, 1.15) << fabric.dump(1);
    if (std::string(type) == "all_reduce") {
      // The 2-D description gives each rank a quarter of the uplink: it predicts a ring far
      // slower than the fabric runs it.
      EXPECT_LT(old, 0.6) << flat.dump(1);
    }
    EXPECT_LE(std::fabs(std::log(ls)), std::fabs(std::log(old)) + 0.05) << type;
  }
}

}  // namespace
}  // namespace genie::testing
