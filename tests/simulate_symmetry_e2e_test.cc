// `genie simulate` of a synth description (no trace files) and its symmetry reduction: the
// data-parallel replicas folded onto one copy give every rank the figures the unreduced
// simulation gives it, to the ns, on all three network models — with the replicas split across
// two network dimensions and on a dimension of their own, tensor parallelism on a Ring, expert
// parallelism with a direct all-to-all over several hops; the in-memory
// graphs give what `genie synth`'s files give; where the reduction does not apply genie says
// why and simulates every rank; bad input is refused up front with the number. Shrunk models
// (128 ranks) so that each case runs in about a second, and one MoE step of 1,024 ranks on the
// flow model; bench/simulate_synth_scale.sh has the full-size figures and
// simulate_synth_slow_test.cc the 1,024-rank check of every model.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

const std::string kJob =
    " --model llama3-8b --layers 4 --hidden 256 --ffn 1024 --heads 8 --kv-heads 8 --vocab 512"
    " --seq 128 --tp 8 --pp 2 --dp 8 --microbatches 4 --global-batch 32 --gpu h100";

std::string Network(const std::string& dir, const std::string& name, const std::string& dims) {
  const std::string path = dir + "/" + name + ".yml";
  std::ofstream(path) << "topology: [ Ring, Switch, Switch ]\nnpus_count: [ " << dims
                      << " ]\nbandwidth: [ 400.0, 50.0, 25.0 ]\nlatency: [ 500.0, 1000.0, 2000.0 ]\n";
  return path;
}

struct Case {
  const char* name;
  const char* dims;   // the network's npus_count
  const char* order;  // extra synth flags
  const char* copies;
};

class SymmetryFold : public ::testing::TestWithParam<Case> {};

TEST_P(SymmetryFold, EveryRankEqualsTheUnreducedSimulationOnEveryModel) {
  const Case& c = GetParam();
  const std::string dir = FreshDir(std::string("symmetry_") + c.name);
  const std::string net = Network(dir, "net", c.dims);
  for (const char* model : {"unaware", "aware", "flow"}) {
    const std::string common = kJob + " " + c.order + " --network " + net + " --network-model " +
                               model + " --all-ranks";
    CliResult off = RunGenie("simulate" + common + " --symmetry off", Stderr::kApart);
    ASSERT_EQ(off.exit_code, 0) << off.output << off.errors;
    CliResult fold = RunGenie("simulate" + common, Stderr::kApart);
    ASSERT_EQ(fold.exit_code, 0) << fold.output << fold.errors;
    EXPECT_NE(fold.errors.find(std::string("symmetry reduction: ")), std::string::npos)
        << fold.errors;
    EXPECT_NE(fold.errors.find(std::string("(") + c.copies + " copies"), std::string::npos)
        << fold.errors;
    EXPECT_NE(off.output.find("sys[127] finished"), std::string::npos) << off.output;
    EXPECT_EQ(fold.output, off.output) << model;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, SymmetryFold,
    ::testing::Values(Case{"split", "8, 4, 4", "", "16"},
                      Case{"aligned", "8, 2, 8", "--rank-order tp,sp,ep,pp,dp", "64"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// Expert parallelism on a Ring of 8 (the all-to-all direct: messages of several hops, every
// link of one orbit) and data parallelism on a Ring of 16: one rank stands for all 128.
TEST(SymmetryFoldMoe, DirectAllToAllOnRingsEqualsTheUnreducedSimulationOnEveryModel) {
  const std::string dir = FreshDir("symmetry_moe");
  const std::string net = dir + "/rings.yml";
  std::ofstream(net) << "topology: [ Ring, Ring ]\nnpus_count: [ 8, 16 ]\n"
                        "bandwidth: [ 400.0, 50.0 ]\nlatency: [ 500.0, 1000.0 ]\n";
  const std::string system = dir + "/direct.json";
  std::ofstream(system) << R"({"all-to-all-implementation": ["direct"],)"
                        << R"( "all-reduce-implementation": ["direct"]})";
  const std::string job =
      " --model mixtral-8x7b --layers 2 --hidden 256 --ffn 512 --heads 8 --kv-heads 8"
      " --vocab 512 --seq 128 --ep 8 --dp 16 --microbatches 2 --global-batch 32";
  for (const char* model : {"unaware", "aware", "flow"}) {
    const std::string common = job + " --system " + system + " --network " + net +
                               " --network-model " + model + " --all-ranks";
    CliResult off = RunGenie("simulate" + common + " --symmetry off", Stderr::kApart);
    ASSERT_EQ(off.exit_code, 0) << off.output << off.errors;
    CliResult fold = RunGenie("simulate" + common, Stderr::kApart);
    ASSERT_EQ(fold.exit_code, 0) << fold.output << fold.errors;
    EXPECT_NE(fold.errors.find("1 representative ranks stand for 128"), std::string::npos)
        << fold.errors;
    EXPECT_NE(off.output.find("sys[127] finished"), std::string::npos) << off.output;
    EXPECT_EQ(fold.output, off.output) << model;
  }
}

// 1,024 ranks of a MoE step on the flow model (about 10 s): the flow model paces a collective
// chunk's messages together by their flow id, which held only 14 bits of the group, so 32 of
// the 128 expert-parallel groups shared ids with others and paced each other's messages — the
// unreduced simulation was not symmetric and the folded one 0.9 % faster. (Every model and a
// dense step at this size: tests/simulate_synth_slow_test.cc.)
TEST(SymmetryFoldMoe, FlowModelAt1024RanksEqualsTheUnreducedSimulation) {
  const std::string dir = FreshDir("symmetry_moe_1024");
  const std::string net = dir + "/net.yml";
  std::ofstream(net) << "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 8, 8, 16 ]\n"
                        "bandwidth: [ 400.0, 50.0, 50.0 ]\nlatency: [ 500.0, 1000.0, 2000.0 ]\n";
  const std::string common =
      " --model mixtral-8x7b --layers 4 --gpu h100 --tp 4 --ep 8 --pp 2 --dp 16 --microbatches 2"
      " --global-batch 64 --network " + net + " --network-model flow --all-ranks --no-progress";
  CliResult off = RunGenie("simulate" + common + " --symmetry off", Stderr::kApart);
  ASSERT_EQ(off.exit_code, 0) << off.output << off.errors;
  CliResult fold = RunGenie("simulate" + common, Stderr::kApart);
  ASSERT_EQ(fold.exit_code, 0) << fold.output << fold.errors;
  EXPECT_NE(fold.errors.find("32 representative ranks stand for 1024"), std::string::npos)
      << fold.errors;
  EXPECT_NE(off.output.find("sys[1023] finished"), std::string::npos) << off.output;
  EXPECT_TRUE(fold.output == off.output) << "folded and unreduced differ";
}

TEST(SimulateSynth, InMemoryGraphsEqualTheWrittenTraces) {
  const std::string dir = FreshDir("symmetry_files");
  const std::string net = Network(dir, "net", "8, 4, 4");
  CliResult w = RunGenie("synth -o " + dir + "/w" + kJob);
  ASSERT_EQ(w.exit_code, 0) << w.output;
  for (const char* model : {"unaware", "aware", "flow"}) {
    const std::string common =
        std::string(" --network ") + net + " --network-model " + model + " --all-ranks";
    CliResult files = RunGenie("simulate " + dir + "/w" + common, Stderr::kApart);
    ASSERT_EQ(files.exit_code, 0) << files.output << files.errors;
    CliResult synth = RunGenie("simulate" + kJob + common, Stderr::kApart);
    ASSERT_EQ(synth.exit_code, 0) << synth.output << synth.errors;
    EXPECT_EQ(synth.output, files.output) << model;
  }
  CliResult both = RunGenie("simulate " + dir + "/w" + kJob + " --network " + net);
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("not both"), std::string::npos) << both.output;
}

TEST(SimulateSynth, SaysWhyTheReductionIsOffAndSimulatesEveryRank) {
  const std::string dir = FreshDir("symmetry_off");
  const std::string net = Network(dir, "net", "8, 4, 4");
  // `genie ARGS` runs and says why every rank is simulated; its output.
  auto off = [](const std::string& args, const std::string& why) {
    CliResult r = RunGenie(args);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("symmetry reduction off, every rank simulated: " + why),
              std::string::npos)
        << r.output;
    return r.output;
  };
  // A rank of interest that is not a representative: its ops would not be simulated.
  const std::string roi =
      off("-v simulate" + kJob + " --network " + net + " --ranks-of-interest 100 -q",
          "--ranks-of-interest 100 is not a representative rank");
  EXPECT_NE(roi.find("128 ranks simulated"), std::string::npos) << roi;
  // A tree is not rotation-symmetric.
  const std::string system = dir + "/tree.json";
  std::ofstream(system) << R"({"all-reduce-implementation": ["doubleBinaryTree"]})";
  off("simulate" + kJob + " --network " + net + " --system " + system + " -q", "the all_reduce");
  // One machine's cores (a testbed's description) are shared by every rank.
  const std::string machine = dir + "/machine.yml";
  std::ofstream(machine) << std::ifstream(net).rdbuf() << "machine_bandwidth: 4\n";
  off("simulate" + kJob + " --network " + machine + " -q", "the network's machine_bandwidth");
}

// -o with the reduction: every rank's summary (equal to the unreduced run's), the
// representatives' ops, and the provenance says what was folded.
TEST(SimulateSynth, ResultsHoldEveryRanksSummaryAndTheRepresentativesOps) {
  const std::string dir = FreshDir("symmetry_results");
  const std::string net = Network(dir, "net", "8, 4, 4");
  CliResult fold = RunGenie("simulate" + kJob + " --network " + net + " -o " + dir + "/fold -q");
  ASSERT_EQ(fold.exit_code, 0) << fold.output;
  CliResult off = RunGenie("simulate" + kJob + " --network " + net + " -o " + dir +
                           "/off -q --symmetry off");
  ASSERT_EQ(off.exit_code, 0) << off.output;
  auto a = nlohmann::json::parse(std::ifstream(dir + "/fold/results.json"));
  auto b = nlohmann::json::parse(std::ifstream(dir + "/off/results.json"));
  ASSERT_EQ(a["ranks"].size(), 128u);
  std::map<int, nlohmann::json> folded, every;
  for (const auto& r : a["ranks"]) folded[r["rank"].get<int>()] = r;
  for (const auto& r : b["ranks"]) every[r["rank"].get<int>()] = r;
  EXPECT_EQ(folded, every);
  EXPECT_EQ(a["summary"], b["summary"]);
  EXPECT_TRUE(a["completeness"]["complete"].get<bool>());
  EXPECT_EQ(a["provenance"]["symmetry_reduction"]["representatives"], 8) << a["provenance"];
  // The representatives' collectives only: one in 16 of them.
  EXPECT_EQ(a["collectives"].size() * 16, b["collectives"].size());
}

TEST(SimulateSynth, RefusesBadInputUpFrontWithTheNumber) {
  const std::string dir = FreshDir("symmetry_bad");
  // A layout that does not divide the model.
  CliResult tp = RunGenie("simulate --model llama3-8b --tp 3 --global-batch 3 --network " +
                          Network(dir, "n", "8, 4, 4"));
  EXPECT_EQ(tp.exit_code, 2) << tp.output;
  EXPECT_NE(tp.output.find("--tp 3 must divide --heads 32"), std::string::npos) << tp.output;
  // More ranks than the network holds.
  CliResult big = RunGenie("simulate" + kJob + " --network " + Network(dir, "small", "8, 4, 2"));
  EXPECT_EQ(big.exit_code, 2) << big.output;
  EXPECT_NE(big.output.find("npus_count multiplies to 64 but the workload"), std::string::npos)
      << big.output;
  EXPECT_NE(big.output.find("has 128 ranks"), std::string::npos) << big.output;
  // More memory than any machine running this test has: 65,536 ranks of 64 micro-batches
  // (about 3 MiB each), every one simulated.
  const std::string huge = dir + "/huge.yml";
  std::ofstream(huge) << "topology: [ Switch ]\nnpus_count: [ 65536 ]\nbandwidth: [ 50.0 ]\n"
                         "latency: [ 500.0 ]\n";
  CliResult ram = RunGenie(
      "simulate --model llama3-8b --tp 8 --pp 4 --dp 2048 --global-batch 131072 "
      "--microbatches 64 --symmetry off --network " + huge);
  EXPECT_EQ(ram.exit_code, 2) << ram.output;
  EXPECT_NE(ram.output.find("simulating 65536 ranks of llama3-8b"), std::string::npos)
      << ram.output;
  EXPECT_NE(ram.output.find("MiB, more than the"), std::string::npos) << ram.output;
}

}  // namespace
}  // namespace genie::testing
