// Simulate conditioned on a measured iteration (MeasuredIteration): the issue order it replays.
// Two ranks on a flow-model switch run two all-reduces at once over both, a bulk one (node 1)
// and a small one (node 2). Each pair of ranks has one connection per direction, which sends
// its messages in the order they were posted, as TCP does.
#include "genie/driver/simulation.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "genie/trace/attributes.h"
#include "tests/support/switch_workload.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;

class SimulationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<ChakraProtoMsg::Node> nodes;
    for (auto [id, bytes] : {std::pair<NodeId, Bytes>{1, 64 << 20}, {2, 64 << 10}}) {
      ChakraProtoMsg::Node& node = nodes.emplace_back();
      node.set_id(id);
      node.set_name("ar" + std::to_string(id));
      node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      trace::AddInt64(&node, "comm_type", 0);  // ALL_REDUCE
      trace::AddUint64(&node, "comm_size", bytes);
    }
    ASSERT_NO_FATAL_FAILURE(::genie::testing::PrepareOnSwitch(dir_.string(), 2, nodes, &setup_));
  }

  // Each node's end on each rank: {rank, node} -> ns.
  std::map<std::pair<int, NodeId>, TimeNs> Run(const MeasuredIteration* measured) {
    auto rec = record::Recorder::Create("", nlohmann::json::object());
    EXPECT_TRUE(rec.ok());
    auto stats = Simulate(setup_, *setup_.network, sim::NetworkModelKind::kFlow, rec->get(),
                          SimulatedIterations(1), measured);
    EXPECT_TRUE(stats.ok()) << stats.status().message();
    std::map<std::pair<int, NodeId>, TimeNs> ends;
    for (const auto& e : (*rec)->ops()) ends[{e.rank, e.node}] = e.end;
    return ends;
  }

  TempDir tmp_{"simulation"};
  std::filesystem::path dir_ = tmp_.path();
  runtime::RunSetup setup_;
};

using Ends = std::map<std::pair<int, NodeId>, TimeNs>;
TimeNs End(const Ends& ends, int rank, NodeId node) { return ends.at({rank, node}); }

TEST_F(SimulationTest, TheRulesIssueInIdOrderSoTheSmallAllReduceWaitsBehindTheBulkOne) {
  const Ends ends = Run(nullptr);
  ASSERT_EQ(ends.size(), 4u);
  // Its messages are posted after the bulk one's first step: they leave after it.
  EXPECT_GT(End(ends, 0, 2), End(ends, 0, 1) / 3);
}

TEST_F(SimulationTest, AMeasuredIssueOrderIsReplayedPerRank) {
  // By the rules: bulk step 1 (32 MiB, ~33 ms), the small step 1 behind it; each rank posts its
  // small step 2 after the bulk step 2 it posted a moment before: the small one ends at ~67 ms.
  const Ends by_rules = Run(nullptr);
  // Both ranks posted the small one first: its step 2 waits only for the bulk step 1, ~33 ms.
  MeasuredIteration small_first;
  small_first.issue_order.resize(2);
  for (auto& order : small_first.issue_order) order[kWorldGroup] = {2, 1};
  const Ends ends = Run(&small_first);
  for (int r = 0; r < 2; ++r) {
    EXPECT_LT(End(ends, r, 2) * 3 / 2, End(by_rules, r, 2)) << "rank " << r;
    EXPECT_LT(End(ends, r, 2) * 3 / 2, End(ends, r, 1)) << "rank " << r;
  }
  // Rank 0 small first, rank 1 bulk first, as two real ranks can: rank 1's small step 1 leaves
  // after its bulk one, so rank 0 posts its small step 2 behind its bulk step 2 — the inversion
  // costs the small all-reduce a whole bulk step, which the rules alone would not show.
  MeasuredIteration inverted;
  inverted.issue_order = {{{kWorldGroup, {2, 1}}}, {{kWorldGroup, {1, 2}}}};
  const Ends inv = Run(&inverted);
  EXPECT_GT(End(inv, 0, 2), End(ends, 0, 2) * 3 / 2);
}

TEST_F(SimulationTest, MeasuredConditionsMustGiveOneEntryPerRank) {
  MeasuredIteration wrong;
  wrong.issue_order.resize(3);
  auto stats = Simulate(setup_, *setup_.network, sim::NetworkModelKind::kFlow, nullptr,
                        SimulatedIterations(1), &wrong);
  ASSERT_FALSE(stats.ok());
  EXPECT_NE(stats.status().message().find("issue orders given for 3 ranks of 2"), std::string::npos)
      << stats.status().message();
}

// Ranks placed on hosts (SimulateInput::rank_host, a jobs file's placement): one rank per host
// in rank order is the network itself, to the ns; both ranks on one host talk over its
// loopback (2 GB/s) instead of the 1 GB/s links. On one machine whose cores move 0.5 GB/s
// (network.yml machine_bandwidth) both are slower.
TEST_F(SimulationTest, RanksPlacedOnHostsUseTheHostsLinksOrItsLoopback) {
  auto end_of = [&](std::vector<int> rank_host, double machine_gbps = 0) {
    SimulateInput input;
    input.rank_host = std::move(rank_host);
    config::NetworkConfig network = *setup_.network;
    network.machine_gbps = machine_gbps;
    auto stats = Simulate(setup_, network, sim::NetworkModelKind::kFlow, nullptr,
                          SimulatedIterations(1), nullptr, input.rank_host.empty() ? nullptr
                                                                                   : &input);
    EXPECT_TRUE(stats.ok()) << stats.status().message();
    return stats.ok() ? stats->end_ns : TimeNs{0};
  };
  const TimeNs plain = end_of({});
  EXPECT_EQ(end_of({0, 1}), plain);
  const TimeNs one_host = end_of({0, 0});
  EXPECT_LT(one_host, plain * 3 / 4);
  EXPECT_GT(end_of({0, 0}, 0.5), one_host * 2);
  EXPECT_GT(end_of({0, 1}, 0.5), plain * 3 / 2);
  SimulateInput bad;
  bad.rank_host = {0, 2};
  auto refused = Simulate(setup_, *setup_.network, sim::NetworkModelKind::kFlow, nullptr,
                          SimulatedIterations(1), nullptr, &bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("rank 1 is placed on host 2"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace genie::driver
