// `genie synth` end to end: synthesized workloads of 8, 64 and 1,024 ranks load in `genie
// inspect` as runnable, simulate on both ASTRA-sim network models (every rank finishes), a
// 64-rank one replays as real TCP traffic on loopback with --verify, and --gzip writes
// compressed files the reader takes. The models are shrunk (--hidden 64, ...) so that the
// 1,024-rank simulations and the 64-process replay fit two shared cores; the full-size figures
// are bench/synth_scale.sh's.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

const std::string kSmall =
    " --model llama3-8b --layers 2 --hidden 64 --ffn 256 --heads 4 --kv-heads 2 --vocab 128"
    " --seq 64";

int Count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

std::string SwitchYml(const std::string& dir, int ranks) {
  std::string path = dir + "/switch.yml";
  std::ofstream(path) << "topology: [ Switch ]\nnpus_count: [ " << ranks
                      << " ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
  return path;
}

struct Scale {
  int ranks;
  const char* layout;
};

void PrintTo(const Scale& s, std::ostream* os) { *os << s.ranks; }

class SynthScale : public ::testing::TestWithParam<Scale> {};

TEST_P(SynthScale, InspectsAndSimulatesOnBothModels) {
  const Scale& s = GetParam();
  const std::string dir = FreshDir("synth_" + std::to_string(s.ranks));
  CliResult w = RunCli(GenieBinary() + " synth -o " + dir + "/w" + kSmall + " " + s.layout);
  ASSERT_EQ(w.exit_code, 0) << w.output;
  ASSERT_NE(w.output.find("wrote " + std::to_string(s.ranks) + " rank(s)"), std::string::npos)
      << w.output;
  CliResult i = RunCli(GenieBinary() + " inspect " + dir + "/w");
  ASSERT_EQ(i.exit_code, 0) << i.output;
  EXPECT_NE(i.output.find("runnable: yes"), std::string::npos) << i.output;
  const std::string yml = SwitchYml(dir, s.ranks);
  for (const char* model : {"unaware", "aware"}) {
    CliResult r = RunCli(GenieBinary() + " simulate " + dir + "/w --system " +
                         Data("astra-sim-configs/HGX-H100-validated.json") + " --network " + yml +
                         " --network-model " + model + " --all-ranks");
    ASSERT_EQ(r.exit_code, 0) << model << ":\n" << r.output.substr(0, 4000);
    // Every rank simulated to the end (--all-ranks prints each rank's line past 64 ranks).
    EXPECT_EQ(Count(r.output, R"(sys\[\d+\] finished, \d+ cycles)"), s.ranks) << model;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ranks, SynthScale,
    ::testing::Values(Scale{8, "--global-batch 16 --dp 2 --tp 2 --pp 2 --microbatches 2"},
                      Scale{64,
                            "--global-batch 16 --dp 8 --tp 2 --pp 2 --sp 2 --microbatches 2 "
                            "--zero 1"},
                      Scale{1024, "--global-batch 256 --dp 256 --tp 2 --pp 2 --microbatches 1"}),
    [](const auto& p) { return std::to_string(p.param.ranks); });

TEST(SynthMoe, ExpertParallelWorkloadSimulatesAndReplays) {
  const std::string dir = FreshDir("synth_moe");
  CliResult w = RunCli(GenieBinary() + " synth -o " + dir +
                       "/w --model mixtral-8x7b --layers 2 --hidden 64 --ffn 128 --heads 4 "
                       "--kv-heads 2 --vocab 128 --seq 64 --global-batch 16 --dp 2 --ep 4 "
                       "--tp 2 --microbatches 2");
  ASSERT_EQ(w.exit_code, 0) << w.output;
  CliResult r = RunCli(GenieBinary() + " simulate " + dir + "/w --system " +
                       Data("astra-sim-configs/HGX-H100-validated.json") + " --network " +
                       SwitchYml(dir, 16));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Count(r.output, R"(sys\[\d+\] finished)"), 16) << r.output;
  // All-to-alls, TP and EP all-gathers on real sockets, results checked.
  CliResult v = RunCli(GenieBinary() + " run " + dir + "/w --verify --peer-timeout 30s --output " +
                       dir + "/out");
  ASSERT_EQ(v.exit_code, 0) << v.output.substr(0, 4000);
  EXPECT_EQ(Count(v.output, R"(verify: \d+ collectives checked, all correct)"), 16)
      << v.output.substr(0, 4000);
}

// Real sockets, real data: every rank's collectives checked element by element.
TEST(SynthReplay, SixtyFourRanksReplayOnLoopbackWithVerify) {
  const std::string dir = FreshDir("synth_replay");
  CliResult w = RunCli(GenieBinary() + " synth -o " + dir + "/w" + kSmall +
                       " --global-batch 16 --dp 8 --tp 2 --pp 2 --sp 2 --microbatches 2");
  ASSERT_EQ(w.exit_code, 0) << w.output;
  CliResult r = RunCli(GenieBinary() + " run " + dir + "/w --verify --peer-timeout 30s --output " +
                       dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 4000);
  EXPECT_EQ(Count(r.output, R"(verify: \d+ collectives checked, all correct)"), 64)
      << r.output.substr(0, 4000);
  EXPECT_EQ(r.output.find("verify failed"), std::string::npos);
}

TEST(SynthGzip, CompressedFilesReadBack) {
  const std::string dir = FreshDir("synth_gzip");
  CliResult w = RunCli(GenieBinary() + " synth --gzip -o " + dir +
                       "/w --model stg-gpt --dp 2 "
                       "--tp 2 --pp 2 --microbatches 2");
  ASSERT_EQ(w.exit_code, 0) << w.output;
  std::ifstream f(dir + "/w/workload.0.et", std::ios::binary);
  unsigned char magic[2] = {0, 0};
  f.read(reinterpret_cast<char*>(magic), 2);
  EXPECT_EQ(magic[0], 0x1f);
  EXPECT_EQ(magic[1], 0x8b);
  CliResult i = RunCli(GenieBinary() + " inspect " + dir + "/w");
  ASSERT_EQ(i.exit_code, 0) << i.output;
  // The shipped trace's collectives, as `genie inspect` prints them for ranks 0-3.
  EXPECT_NE(i.output.find("collectives: all_gather x24 (12 MiB) all_reduce x6 (86.5 MiB) "
                          "reduce_scatter x16 (16 MiB); send x2 (1 MiB), recv x2 (1 MiB)"),
            std::string::npos)
      << i.output;
}

TEST(SynthErrors, BadLayoutNamesTheFlag) {
  CliResult r =
      RunCli(GenieBinary() + " synth -o " + FreshDir("synth_bad") + "/w --model llama3-8b --tp 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--tp"), std::string::npos) << r.output;
  CliResult p = RunCli(GenieBinary() + " synth -o " + FreshDir("synth_bad2") + "/w --model nope");
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.output.find("llama3-70b"), std::string::npos) << p.output;
}

}  // namespace
}  // namespace genie::testing
