// PeerSet: the peers each algorithm's plan names (ring, tree, halving-doubling, all-to-all,
// hierarchical), that every set is symmetric across ranks (both ends of a pair connect), and
// PlannedPeers over a trace with collectives and point-to-point nodes.
#include "genie/runtime/peer_set.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "genie/runtime/collective_plan.h"
#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"
#include "tests/support/temp_dir.h"

namespace genie::runtime {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;
using collective::Algorithm;

ExecutorConfig Config(int world, CollectiveType type, std::vector<Algorithm> algorithms,
                      std::vector<int> dims = {}) {
  ExecutorConfig c;
  c.world_size = world;
  c.implementations[type].algorithms = std::move(algorithms);
  c.plan.dims = std::move(dims);
  return c;
}

Op Collective(CollectiveType type, Bytes bytes) {
  Op op;
  op.id = 1;
  op.name = "coll";
  op.kind = OpKind::kCollective;
  op.coll_type = type;
  op.comm_size = bytes;
  return op;
}

// Every rank's peers for one collective.
std::vector<std::vector<int>> PeersOfAll(const ExecutorConfig& config, const Op& op) {
  std::vector<std::vector<int>> out;
  for (int r = 0; r < config.world_size; ++r) {
    auto plan = PlanCollective(op, config, {}, r);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    std::vector<int> peers;
    if (plan.ok()) AddSchedulePeers(plan->schedule, r, &peers);
    out.push_back(peers);
  }
  return out;
}

void ExpectSymmetric(const std::vector<std::vector<int>>& peers) {
  for (int r = 0; r < static_cast<int>(peers.size()); ++r) {
    for (int p : peers[static_cast<size_t>(r)]) {
      const auto& back = peers[static_cast<size_t>(p)];
      EXPECT_TRUE(std::find(back.begin(), back.end(), r) != back.end())
          << "rank " << r << " names " << p << " but not the other way round";
    }
  }
}

TEST(PeerSet, RingAllReduceNamesOnlyTheTwoNeighbours) {
  auto peers = PeersOfAll(Config(8, CollectiveType::kAllReduce, {Algorithm::kRing}),
                          Collective(CollectiveType::kAllReduce, 1 << 20));
  EXPECT_EQ(peers[0], (std::vector<int>{1, 7}));
  EXPECT_EQ(peers[3], (std::vector<int>{2, 4}));
  ExpectSymmetric(peers);
}

TEST(PeerSet, HalvingDoublingNamesLogNPartners) {
  auto peers = PeersOfAll(Config(8, CollectiveType::kAllReduce, {Algorithm::kHalvingDoubling}),
                          Collective(CollectiveType::kAllReduce, 1 << 20));
  EXPECT_EQ(peers[0], (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(peers[5], (std::vector<int>{1, 4, 7}));
  ExpectSymmetric(peers);
}

TEST(PeerSet, TreesNameParentsAndChildrenOnly) {
  for (Algorithm a : {Algorithm::kDoubleBinaryTree, Algorithm::kTree}) {
    const CollectiveType type =
        a == Algorithm::kTree ? CollectiveType::kBroadcast : CollectiveType::kAllReduce;
    auto peers = PeersOfAll(Config(16, type, {a}), Collective(type, 1 << 20));
    size_t most = 0, total = 0;
    for (const auto& p : peers) {
      most = std::max(most, p.size());
      total += p.size();
    }
    // Two trees of 16: a rank has a parent and up to two children in each.
    EXPECT_LE(most, 6u) << collective::AlgorithmName(a);
    EXPECT_LT(total, 16u * 15u / 2) << collective::AlgorithmName(a);
    ExpectSymmetric(peers);
  }
}

TEST(PeerSet, AllToAllNamesEveryone) {
  auto peers = PeersOfAll(Config(6, CollectiveType::kAllToAll, {Algorithm::kDirect}),
                          Collective(CollectiveType::kAllToAll, 6 << 10));
  for (int r = 0; r < 6; ++r) EXPECT_EQ(peers[static_cast<size_t>(r)].size(), 5u) << r;
}

TEST(PeerSet, HierarchicalRingsNamePerDimensionNeighbours) {
  // 4x2: dimension 0 is a ring of 4 consecutive ranks, dimension 1 pairs rank r with r +- 4.
  auto peers = PeersOfAll(
      Config(8, CollectiveType::kAllReduce, {Algorithm::kRing, Algorithm::kRing}, {4, 2}),
      Collective(CollectiveType::kAllReduce, 1 << 20));
  EXPECT_EQ(peers[0], (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(peers[6], (std::vector<int>{2, 5, 7}));
  ExpectSymmetric(peers);
}

class PlannedPeersTest : public ::testing::Test {
 protected:
  TempDir tmp_{"peer-set"};
  fs::path dir_ = tmp_.path();
};

TEST_F(PlannedPeersTest, CollectivesAndPointToPointNodes) {
  // Rank 2 of 8: a ring all-reduce (peers 1, 3), a send to 6 and a receive from 5.
  const std::string path = (dir_ / "t.2.et").string();
  auto w = trace::EtWriter::Create(path, trace::DefaultMetadata());
  ASSERT_TRUE(w.ok());
  auto node = [&](NodeId id, ChakraProtoMsg::NodeType type) {
    ChakraProtoMsg::Node n;
    n.set_id(id);
    n.set_name("n" + std::to_string(id));
    n.set_type(type);
    return n;
  };
  ChakraProtoMsg::Node coll = node(1, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&coll, "comm_type", 0);
  trace::AddUint64(&coll, "comm_size", 1 << 20);
  ASSERT_TRUE((*w)->Write(coll).ok());
  for (auto [id, type, src, dst] : {std::tuple<NodeId, ChakraProtoMsg::NodeType, int, int>{
                                        2, ChakraProtoMsg::COMM_SEND_NODE, 2, 6},
                                    {3, ChakraProtoMsg::COMM_RECV_NODE, 5, 2}}) {
    ChakraProtoMsg::Node n = node(id, type);
    trace::AddInt64(&n, "comm_src", src);
    trace::AddInt64(&n, "comm_dst", dst);
    trace::AddInt64(&n, "comm_tag", 0);
    trace::AddUint64(&n, "comm_size", 64);
    ASSERT_TRUE((*w)->Write(n).ok());
  }
  ASSERT_TRUE((*w)->Close().ok());
  auto g = workload::RankGraph::Open(path, 2, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExecutorConfig config;
  config.world_size = 8;
  auto peers = PlannedPeers(**g, config);
  ASSERT_TRUE(peers.ok()) << peers.status().ToString();
  EXPECT_EQ(*peers, (std::vector<int>{1, 3, 5, 6}));
}

TEST_F(PlannedPeersTest, ARankWithoutCommunicationHasNoPeers) {
  const std::string path = (dir_ / "t.0.et").string();
  auto w = trace::EtWriter::Create(path, trace::DefaultMetadata());
  ASSERT_TRUE(w.ok());
  ChakraProtoMsg::Node n;
  n.set_id(1);
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(5);
  ASSERT_TRUE((*w)->Write(n).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto g = workload::RankGraph::Open(path, 0, {});
  ASSERT_TRUE(g.ok());
  ExecutorConfig config;
  config.world_size = 4;
  auto peers = PlannedPeers(**g, config);
  ASSERT_TRUE(peers.ok());
  EXPECT_TRUE(peers->empty());
}

}  // namespace
}  // namespace genie::runtime
