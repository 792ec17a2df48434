// Issue 44's slow checks, in `make test-all` (label "slow"):
// - the largest row: a Llama-3 405B training step on 65,536 GPUs (tp 8, pp 16, dp 512, 8
//   micro-batches) on Ring 8 x Switch 8 x Switch 1,024, from a synth description, on the
//   unaware and the flow model: within 10 minutes and 16 GiB each (the bounds; with the
//   symmetry reduction it takes seconds), every rank accounted for in the summary, and the
//   printed lines bounded;
// - the symmetry reduction's exactness at 1,024 ranks: a dense step and a MoE step with expert
//   parallelism, folded and unfolded (--symmetry off), on the three-dimensional network and on a
//   3-tier fat-tree, every model: every rank's line (finish time, exposed communication) equal.
//   (make test checks the same at 128 ranks: tests/simulate_symmetry_e2e_test.cc,
//   tests/simulate_tiers_e2e_test.cc.)
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

TEST(SimulateSynthSlow, SixtyFiveThousandRanksInTenMinutesAnd16GiB) {
  const std::string dir = FreshDir("simulate_65536");
  const std::string net = dir + "/net.yml";
  std::ofstream(net) << "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 8, 8, 1024 ]\n"
                        "bandwidth: [ 400.0, 50.0, 50.0 ]\nlatency: [ 500.0, 1000.0, 2000.0 ]\n";
  for (const char* model : {"unaware", "flow"}) {
    const auto start = std::chrono::steady_clock::now();
    CliResult r = RunGenie(
        "simulate --model llama3-405b --gpu h100 --tp 8 --pp 16 --dp 512 --microbatches 8 "
        "--global-batch 4096 --network " + net + " --network-model " + model,
        Stderr::kApart);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
    EXPECT_LT(seconds, 600) << model;
    rusage children{};
    ASSERT_EQ(getrusage(RUSAGE_CHILDREN, &children), 0);
    EXPECT_LT(children.ru_maxrss, 16L << 20) << "KiB, " << model;  // ru_maxrss is in KiB
    EXPECT_NE(r.errors.find("stand for 65536"), std::string::npos) << r.errors;
    EXPECT_NE(r.output.find("sys[65535] finished"), std::string::npos) << r.output;
    EXPECT_LT(r.output.size(), 100u << 10) << model;  // bounded: 32 lines and a summary
  }
}

// 1,024 ranks, shrunk layers so that each unreduced run takes seconds, not minutes.
struct Job {
  const char* name;
  const char* flags;
};
constexpr Job kJobs[] = {
    {"dense", "--model llama3-70b --layers 8 --gpu h100 --tp 8 --pp 4 --dp 32 --microbatches 4 "
              "--global-batch 128"},
    {"moe", "--model mixtral-8x7b --layers 4 --gpu h100 --tp 4 --ep 8 --pp 2 --dp 16 "
            "--microbatches 2 --global-batch 64"},
};

TEST(SimulateSynthSlow, FoldedEqualsUnreducedAt1024RanksOnEveryModel) {
  const std::string dir = FreshDir("simulate_fold_1024");
  const std::string three_dim = dir + "/net.yml";
  std::ofstream(three_dim) << "topology: [ Ring, Switch, Switch ]\nnpus_count: [ 8, 8, 16 ]\n"
                              "bandwidth: [ 400.0, 50.0, 50.0 ]\n"
                              "latency: [ 500.0, 1000.0, 2000.0 ]\n";
  // Rail-optimized: NVLink 8, rail leaves of 8 servers, 4 leaf groups per pod, 4 pods; 2 spines
  // per pod, 8 super-spines, 2:1 at both tiers.
  const std::string fat_tree = dir + "/fat_tree.yml";
  std::ofstream(fat_tree) << "topology: [ Switch, Switch, Switch, Switch ]\n"
                             "npus_count: [ 8, 8, 4, 4 ]\n"
                             "bandwidth: [ 400.0, 50.0, 25.0, 12.5 ]\n"
                             "latency: [ 250.0, 1000.0, 1000.0, 1000.0 ]\n"
                             "leaf_dimension: 1\nspines: 2\nspine_latency: 1000\n"
                             "oversubscription: 2\nsuper_spines: 8\nsuper_spine_latency: 2000\n"
                             "spine_oversubscription: 2\n";
  for (const std::string& net : {three_dim, fat_tree}) {
    for (const Job& job : kJobs) {
      for (const char* model : {"unaware", "aware", "flow"}) {
        const std::string common = std::string(" ") + job.flags + " --network " + net +
                                   " --network-model " + model + " --all-ranks --no-progress";
        CliResult off = RunGenie("simulate" + common + " --symmetry off", Stderr::kApart);
        ASSERT_EQ(off.exit_code, 0) << off.output << off.errors;
        CliResult fold = RunGenie("simulate" + common, Stderr::kApart);
        ASSERT_EQ(fold.exit_code, 0) << fold.output << fold.errors;
        EXPECT_NE(fold.errors.find("stand for 1024"), std::string::npos) << fold.errors;
        EXPECT_NE(off.output.find("sys[1023] finished"), std::string::npos) << off.output;
        EXPECT_EQ(fold.output, off.output) << net << ", " << job.name << ", " << model;
      }
    }
  }
}

}  // namespace
}  // namespace genie::testing
