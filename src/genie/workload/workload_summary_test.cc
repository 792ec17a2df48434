// InspectWorkload as a library: text folding of identical ranks, problems vs warnings.
#include "genie/workload/workload_summary.h"

#include <gtest/gtest.h>

namespace genie::workload {
namespace {

const std::string kData = std::string(GENIE_DATA_DIR) + "/traces";

TEST(WorkloadSummaryTest, FoldsIdenticalRanksInText) {
  auto files = trace::FindWorkload(kData + "/astra-sim/microbenchmarks/reduce_scatter/16npus_1MB");
  ASSERT_TRUE(files.ok());
  auto s = InspectWorkload(*files, {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->runnable());
  std::string text = FormatText(*s);
  EXPECT_NE(text.find("  ranks 0-15: 1 nodes (COMM_COLL 1); collectives: reduce_scatter x1 "
                      "(1 MiB); compute 0 ns\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("runnable: yes"), std::string::npos);
  auto j = ToJson(*s);
  EXPECT_EQ(j["groups"]["world"].size(), 16u);
  EXPECT_EQ(j["ranks"][15]["collectives"]["reduce_scatter"]["total_bytes"], 1048576);
}

TEST(WorkloadSummaryTest, PipelineSendRecvPairUp) {
  // gpt_dp2_tp2_pp2: each rank of stage 0 sends 2 activations to its stage-1 peer (rank+4)
  // and receives 2 gradients back (independent decode: 2 SEND, 2 RECV of 524,288 B each).
  auto files = trace::FindWorkload(kData + "/generated/stg/gpt_dp2_tp2_pp2");
  ASSERT_TRUE(files.ok());
  auto s = InspectWorkload(*files, {});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->problems.empty()) << s->problems[0];
  for (const RankSummary& r : s->ranks) {
    EXPECT_EQ(r.sends, 2u);
    EXPECT_EQ(r.recvs, 2u);
    EXPECT_EQ(r.send_bytes, 1048576u);
  }
  EXPECT_EQ(s->groups.size(), 8u);  // pg_name 1..8 (independent decode), from workload.json
  EXPECT_EQ(s->groups.at(7), (std::vector<int>{4, 6}));
}

}  // namespace
}  // namespace genie::workload
