// `genie plan` end to end: the real binary plans, checks and totals a collective.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/paths.h"

namespace genie::testing {
namespace {

TEST(PlanE2e, RingAllReduceTotalsAndChecks) {
  const CliResult o =
      RunGenie("plan --collective all_reduce --algorithm ring --ranks 8 --size 1MiB");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("checker: ok"), std::string::npos) << o.output;
  // 2(N-1) S = 14 MiB in 8 x 14 messages.
  EXPECT_NE(o.output.find("total                   112         14680064"), std::string::npos)
      << o.output;
}

TEST(PlanE2e, PrintsOneRanksStepsWithChannelsAndSlices) {
  const CliResult o = RunGenie(
      "plan -c all_gather -a ring -n 4 -s 4096 --rank 1 --channels 2 "
      "--slice 1024");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  // All-gather of 4 KiB per rank: send, 2 recv-copy-send, recv; each as 2 channels x 2
  // slices of 1 KiB.
  EXPECT_NE(o.output.find("rank 1 (group index 1): buffer 16384 B, 16 steps"), std::string::npos)
      << o.output;
  EXPECT_NE(o.output.find("recv-copy-send"), std::string::npos);
  EXPECT_NE(o.output.find("total                    48            49152"), std::string::npos)
      << o.output;
}

TEST(PlanE2e, GroupSubsetsAndAllToAll) {
  const CliResult o = RunGenie("plan -c all_to_all -a direct --group 9,2,5 -s 3000");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("checker: ok"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("total                     6             6000"), std::string::npos)
      << o.output;
}

TEST(PlanE2e, HierarchicalTopologyWithLocalBwAware) {
  // 8x4, ring on dim 0 and direct on dim 1: per rank RS 7/8 S + AR 2*3/4*S/8 + AG 7/8 S.
  const CliResult o = RunGenie(
      "plan -c all_reduce -a ring,direct --topology 8x4 "
      "--optimization localBWAware -s 1MiB --rank 31");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("32 ranks"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("checker: ok"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("      31         28         20          2031616"), std::string::npos)
      << o.output;
}

TEST(PlanE2e, CustomMscclXmlAndChakraTrace) {
  const std::string dir = Data("traces/astra-sim/custom_ring_allreduce_8npus_1MB");
  for (const std::string& path : {dir + "/custom_allreduce.xml", dir + "/custom_allreduce"}) {
    const CliResult o = RunGenie("plan --custom " + path + " -s 1MiB");
    ASSERT_EQ(o.exit_code, 0) << o.output;
    EXPECT_NE(o.output.find("checker: ok"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("total                   112         14680064"), std::string::npos)
        << o.output;
  }
}

TEST(PlanE2e, RejectsUnknownNamesAndUnsupportedPairs) {
  CliResult o = RunGenie("plan -c all_reduce -a bogus -n 4");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("unknown algorithm 'bogus'"), std::string::npos) << o.output;
  o = RunGenie("plan -c all_gather -a doubleBinaryTree -n 4");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.output.find("does not implement all_gather"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace genie::testing
