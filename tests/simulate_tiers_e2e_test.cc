// `genie simulate` on a 3-tier fat-tree (network.yml super_spines): a synth training step whose
// data-parallel replicas span pods, folded by the symmetry reduction, gives every rank the
// figures of the unreduced simulation to the ns on all three models — with tensor parallelism
// inside a server, so that each pod's core links stand for 8 copies at once (a rotation of tp
// fixes the pod) — and the same holds on a 2-tier leaf-spine; where the fabric cannot be folded
// (pinned ECMP routes) genie says why; a rank count the fabric does not hold is refused with
// the numbers. 128 ranks, about a second per case.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

// tp 8 (inside a server) x dp 8 x pp 2, tp fastest then dp then pp.
const std::string kJob =
    " --model llama3-8b --layers 4 --hidden 256 --ffn 1024 --heads 8 --kv-heads 8 --vocab 512"
    " --seq 128 --tp 8 --pp 2 --dp 8 --microbatches 4 --global-batch 32 --gpu h100";

// Rail-optimized 3-tier: NVLink 8, rails of 2 servers, 2 leaf groups per pod, 4 pods (128
// ranks); 2:1 at the leaves and 2:1 at the spines, 2 spines per pod, 4 super-spines.
std::string ThreeTier(const std::string& dir, int pods = 4) {
  const std::string path = dir + "/fat_tree.yml";
  std::ofstream(path) << "topology: [ Switch, Switch, Switch, Switch ]\n"
                         "npus_count: [ 8, 2, 2, " << pods << " ]\n"
                         "bandwidth: [ 400.0, 50.0, 25.0, 12.5 ]\n"
                         "latency: [ 250.0, 1000.0, 1000.0, 1000.0 ]\n"
                         "leaf_dimension: 1\nspines: 2\nspine_latency: 1000\n"
                         "oversubscription: 2\nsuper_spines: 4\nsuper_spine_latency: 2000\n"
                         "spine_oversubscription: 2\n";
  return path;
}

void ExpectFoldEqualsUnreduced(const std::string& net, const std::string& copies) {
  for (const char* model : {"unaware", "aware", "flow"}) {
    const std::string common =
        kJob + " --network " + net + " --network-model " + model + " --all-ranks";
    CliResult off = RunGenie("simulate" + common + " --symmetry off", Stderr::kApart);
    ASSERT_EQ(off.exit_code, 0) << off.output << off.errors;
    CliResult fold = RunGenie("simulate" + common, Stderr::kApart);
    ASSERT_EQ(fold.exit_code, 0) << fold.output << fold.errors;
    EXPECT_NE(fold.errors.find("stand for 128 (" + copies + " copies"), std::string::npos)
        << fold.errors;
    EXPECT_NE(off.output.find("sys[127] finished"), std::string::npos) << off.output;
    EXPECT_EQ(fold.output, off.output) << model;
  }
}

// dp rotated by 4 moves the pods (0 <-> 1, 2 <-> 3), tp rotates the rails; every rank's lines
// equal the unreduced run's.
TEST(SimulateTiers, FoldedThreeTierEqualsTheUnreducedSimulationOnEveryModel) {
  const std::string dir = FreshDir("tiers_fold");
  ExpectFoldEqualsUnreduced(ThreeTier(dir), "16");
}

// The 2-tier leaf-spine (same ranks; the pods become the leaves' coordinate across 2 spines).
TEST(SimulateTiers, FoldedLeafSpineEqualsTheUnreducedSimulationOnEveryModel) {
  const std::string dir = FreshDir("tiers_leafspine");
  const std::string net = dir + "/leaf_spine.yml";
  std::ofstream(net) << "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 8, 4, 4 ]\n"
                        "bandwidth: [ 400.0, 50.0, 25.0 ]\nlatency: [ 250.0, 1000.0, 1000.0 ]\n"
                        "leaf_dimension: 1\nspines: 2\nspine_latency: 1000\n"
                        "oversubscription: 2\n";
  ExpectFoldEqualsUnreduced(net, "16");
}

TEST(SimulateTiers, SaysWhyAFabricIsNotFoldedAndRefusesWhatItCannotHold) {
  const std::string dir = FreshDir("tiers_refused");
  // Pinned ECMP routes (the testbed's known hash) are not rotation-symmetric.
  const std::string pinned = dir + "/pinned.yml";
  std::ofstream(pinned) << "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 4, 2, 16 ]\n"
                           "bandwidth: [ 50.0, 50.0, 50.0 ]\nlatency: [ 1000.0, 1000.0, 1.0 ]\n"
                           "spines: 2\nspine_bandwidth: 50\nspine_latency: 1000\n"
                           "ecmp_routes: [ [0, 4, 1] ]\n";
  CliResult r = RunGenie("simulate" + kJob + " --network " + pinned + " --network-model flow -q",
                         Stderr::kApart);
  ASSERT_EQ(r.exit_code, 0) << r.output << r.errors;
  EXPECT_NE(r.errors.find("symmetry reduction off, every rank simulated: network.yml "
                          "ecmp_routes pins pairs of hosts to spines"),
            std::string::npos)
      << r.errors;
  // 8 x 2 x 2 x 2 = 64 NPUs for 128 ranks.
  CliResult small = RunGenie("simulate" + kJob + " --network " + ThreeTier(dir, 2));
  EXPECT_EQ(small.exit_code, 2) << small.output;
  EXPECT_NE(small.output.find("npus_count multiplies to 64 but the workload"), std::string::npos)
      << small.output;
  EXPECT_NE(small.output.find("has 128 ranks"), std::string::npos) << small.output;
}

}  // namespace
}  // namespace genie::testing
