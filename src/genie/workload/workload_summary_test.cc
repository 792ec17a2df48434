// InspectWorkload as a library: text folding of identical ranks, problems vs warnings.
#include "genie/workload/workload_summary.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"
#include "tests/support/temp_dir.h"

namespace genie::workload {
namespace {

using ::genie::testing::TempDir;

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

// A SEND longer than one frame carries would be rejected by the receiver as a bad frame after
// it was sent: inspect says so up front, naming the rank, node and size.
TEST(WorkloadSummaryTest, AMessageLargerThanAFrameIsAProblem) {
  namespace fs = std::filesystem;
  const TempDir tmp("huge-p2p");
  const fs::path dir = tmp.path();
  const int64_t size = int64_t{100} << 30;  // 100 GiB
  for (int r = 0; r < 2; ++r) {
    auto w = trace::EtWriter::Create((dir / ("p2p." + std::to_string(r) + ".et")).string(),
                                     trace::DefaultMetadata());
    ASSERT_TRUE(w.ok());
    ChakraProtoMsg::Node n;
    n.set_id(7);
    n.set_name(r == 0 ? "send_activations" : "recv_activations");
    n.set_type(r == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
    trace::AddInt32(&n, r == 0 ? "comm_dst" : "comm_src", 1 - r);
    trace::AddInt32(&n, "comm_tag", 5);
    trace::AddInt64(&n, "comm_size", size);
    ASSERT_TRUE((*w)->Write(n).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }
  auto files = trace::FindWorkload((dir / "p2p").string());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  auto s = InspectWorkload(*files, {});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->runnable());
  ASSERT_EQ(s->problems.size(), 2u) << FormatText(*s);
  EXPECT_NE(s->problems[0].find("(rank 0): node 7 (send_activations) sends 100 GiB to rank 1: "
                                "larger than one message may be on the wire (64 GiB)"),
            std::string::npos)
      << s->problems[0];
  EXPECT_NE(s->problems[1].find("(rank 1): node 7 (recv_activations) receives 100 GiB from rank 0"),
            std::string::npos)
      << s->problems[1];
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
