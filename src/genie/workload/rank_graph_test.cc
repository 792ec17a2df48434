// RankGraph: ready set order, forward references, ctrl_deps modes, cycles, errors, real traces.
#include "genie/workload/rank_graph.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "genie/trace/attributes.h"
#include "genie/trace/et_writer.h"
#include "tests/support/temp_dir.h"

namespace genie::workload {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;
const std::string kData = std::string(GENIE_DATA_DIR) + "/traces";

struct N {
  NodeId id;
  std::vector<NodeId> data;
  std::vector<NodeId> ctrl = {};
  ChakraProtoMsg::NodeType type = ChakraProtoMsg::COMP_NODE;
};

class RankGraphTest : public ::testing::Test {
 protected:
  // Writes nodes in the given (file) order.
  std::string Write(const std::vector<N>& nodes, const std::string& name = "t.0.et",
                    bool gz = false) {
    std::string path = (dir_ / name).string();
    auto w = trace::EtWriter::Create(path, trace::DefaultMetadata(), gz);
    EXPECT_TRUE(w.ok());
    for (const N& n : nodes) {
      ChakraProtoMsg::Node node;
      node.set_id(n.id);
      node.set_type(n.type);
      node.set_duration_micros(n.id);
      for (NodeId d : n.data) node.add_data_deps(d);
      for (NodeId d : n.ctrl) node.add_ctrl_deps(d);
      EXPECT_TRUE((*w)->Write(node).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
    return path;
  }
  // Runs the graph sequentially (smallest ready first) and returns the completion order.
  static std::vector<NodeId> Drain(RankGraph& g) {
    std::vector<NodeId> order;
    while (!g.ready().empty()) {
      NodeId id = *g.ready().begin();
      g.Take(id);
      g.Complete(id);
      order.push_back(id);
    }
    return order;
  }
  TempDir tmp_{"rank-graph"};
  fs::path dir_ = tmp_.path();
};

TEST_F(RankGraphTest, ForwardReferencesAndAscendingReadyOrder) {
  // File order is not topological: 30 depends on 40 which comes later in the file.
  std::string path = Write({{30, {40}}, {10, {}}, {40, {}}, {20, {10}}, {50, {20, 30}}});
  auto g = RankGraph::Open(path, 0, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->size(), 5u);
  EXPECT_EQ((*g)->ids(), (std::vector<NodeId>{10, 20, 30, 40, 50}));
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{10, 40}));
  (*g)->Take(40);
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{10}));
  (*g)->Complete(40);
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{10, 30}));
  EXPECT_FALSE((*g)->AllComplete());
  EXPECT_EQ(Drain(**g), (std::vector<NodeId>{10, 20, 30, 50}));
  EXPECT_TRUE((*g)->AllComplete());
  (*g)->Reset();
  EXPECT_EQ(Drain(**g), (std::vector<NodeId>{10, 20, 40, 30, 50}));
  auto op = (*g)->Load(30);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->duration_ns, 30'000);
  EXPECT_EQ(op->data_deps, (std::vector<NodeId>{40}));
  EXPECT_EQ((*g)->Load(31).status().code(), Status::Code::kNotFound);
  EXPECT_TRUE((*g)->warnings().empty());
}

TEST_F(RankGraphTest, DuplicateDepsCountOnce) {
  std::string path = Write({{1, {}}, {2, {1, 1}, {1}}}, "dup.0.et", /*gz=*/true);
  auto g = RankGraph::Open(path, 0, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(Drain(**g), (std::vector<NodeId>{1, 2}));
}

TEST_F(RankGraphTest, CtrlDepsModes) {
  // 3 waits for 2 only through a ctrl dep; 2 names a missing ctrl dep 99.
  std::string path = Write({{1, {}}, {2, {}, {99}}, {3, {1}, {2}}});
  auto g = RankGraph::Open(path, 4, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->warnings().size(), 1u);
  EXPECT_EQ((*g)->warnings()[0],
            "[ctrl-dep-missing] " + path +
                " (rank 4): 1 ctrl_deps name nodes that are not in the trace (node->dep: 2->99); "
                "those ctrl_deps are ignored");
  EXPECT_TRUE((*g)->ctrl_deps_counted());
  (*g)->Take(1);
  (*g)->Complete(1);
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{2}));  // 3 still waits for 2

  ReadOptions off;
  off.ctrl_deps = ReadOptions::CtrlDeps::kOff;
  g = RankGraph::Open(path, 4, off);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE((*g)->warnings().empty());
  (*g)->Take(1);
  (*g)->Complete(1);
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{2, 3}));

  ReadOptions on;
  on.ctrl_deps = ReadOptions::CtrlDeps::kOn;
  auto strict = RankGraph::Open(path, 4, on);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.status().message().find("[ctrl-dep-missing]"), std::string::npos);
}

TEST_F(RankGraphTest, CtrlCycleFallsBackToDataDeps) {
  std::string path = Write({{1, {}}, {2, {1}, {4}}, {3, {2}}, {4, {3}}, {5, {}, {1}}});
  auto g = RankGraph::Open(path, 1, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->warnings().size(), 1u);
  EXPECT_EQ((*g)->warnings()[0], "[ctrl-dep-cycle] " + path +
                                     " (rank 1): ctrl_deps form a cycle: 2 -> 3 -> 4 -> 2; this "
                                     "rank uses data_deps only");
  EXPECT_FALSE((*g)->ctrl_deps_counted());
  // Data deps only: 5 is ready at once (its ctrl dep on 1 no longer counts).
  EXPECT_EQ((*g)->ready(), (std::set<NodeId>{1, 5}));
  EXPECT_EQ(Drain(**g), (std::vector<NodeId>{1, 2, 3, 4, 5}));
  ReadOptions on;
  on.ctrl_deps = ReadOptions::CtrlDeps::kOn;
  EXPECT_NE(RankGraph::Open(path, 1, on).status().message().find("[ctrl-dep-cycle]"),
            std::string::npos);
}

TEST_F(RankGraphTest, DataCycleMissingDataDepAndDuplicateIdAreErrors) {
  std::string cyc = Write({{1, {}}, {7, {1, 9}}, {8, {7}}, {9, {8}}}, "cyc.0.et");
  auto g = RankGraph::Open(cyc, 2, {});
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().message(), "[data-dep-cycle] " + cyc +
                                      " (rank 2): data_deps form a cycle: 7 -> 8 -> 9 -> 7; the "
                                      "trace cannot run (fix its data_deps)");
  std::string self = Write({{1, {1}}}, "self.0.et");
  EXPECT_NE(RankGraph::Open(self, 0, {}).status().message().find("cycle: 1 -> 1"),
            std::string::npos);
  std::string miss = Write({{1, {}}, {2, {5}}}, "miss.0.et");
  EXPECT_EQ(RankGraph::Open(miss, 0, {}).status().message(),
            "[data-dep-missing] " + miss +
                " (rank 0): 1 data_deps name nodes that are not in the trace (node->dep: 2->5); "
                "the trace is incomplete or from a different rank");
  std::string dup = Write({{1, {}}, {2, {}}, {1, {}}}, "dupid.0.et");
  auto d = RankGraph::Open(dup, 0, {});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("[duplicate-node-id]"), std::string::npos);
  EXPECT_NE(d.status().message().find("node id 1 appears twice"), std::string::npos);
  std::string badtype = Write({{1, {}, {}, static_cast<ChakraProtoMsg::NodeType>(9)}}, "bt.0.et");
  EXPECT_NE(RankGraph::Open(badtype, 0, {}).status().message().find("[unknown-node-type]"),
            std::string::npos);
}

TEST_F(RankGraphTest, MetadataNodeProcessGroups) {
  std::string path = (dir_ / "md.0.et").string();
  auto w = trace::EtWriter::Create(path, trace::DefaultMetadata());
  ASSERT_TRUE(w.ok());
  ChakraProtoMsg::Node md;
  md.set_id(1);
  md.set_type(ChakraProtoMsg::METADATA_NODE);
  md.set_name("[pytorch|profiler|execution_trace|process_group]");
  md.mutable_inputs()->set_values(
      R"(['[{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"ranks\": [0, 1, 2, 3]}, )"
      R"({\"pg_name\": \"1.0\", \"ranks\": [3, 1]}]'])");
  ASSERT_TRUE((*w)->Write(md).ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto g = RankGraph::Open(path, 0, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const auto& groups = (*g)->metadata_groups().all();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups.at(0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(groups.at(1), (std::vector<int>{1, 3}));
}

// dlrm rank 0 (figures from an independent decode: src/genie/trace/decode_et.py): 1,131 nodes,
// 788 ctrl_deps naming missing nodes, a ctrl cycle (1106 ctrl-> 1107, 1107 data-> 1106).
TEST_F(RankGraphTest, RealDlrmRankWarnsAndRunsOnDataDeps) {
  auto g = RankGraph::Open(kData + "/generated/pytorch/dlrm_8npus/dlrm.0.et", 0, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->size(), 1131u);
  EXPECT_EQ((*g)->type_counts()[ChakraProtoMsg::COMP_NODE], 1107u);
  EXPECT_EQ((*g)->type_counts()[ChakraProtoMsg::COMM_COLL_NODE], 24u);
  ASSERT_EQ((*g)->warnings().size(), 2u);
  EXPECT_EQ((*g)->warnings()[0].find("[ctrl-dep-missing]"), 0u);
  EXPECT_NE((*g)->warnings()[0].find(": 788 ctrl_deps"), std::string::npos);
  EXPECT_EQ((*g)->warnings()[1].find("[ctrl-dep-cycle]"), 0u);
  EXPECT_FALSE((*g)->ctrl_deps_counted());
  size_t wrappers = 0;
  while (!(*g)->ready().empty()) {
    NodeId id = *(*g)->ready().begin();
    (*g)->Take(id);
    auto op = (*g)->Load(id);
    ASSERT_TRUE(op.ok()) << op.status().ToString();
    if (op->kind == OpKind::kCompute && op->name.rfind("c10d::", 0) == 0) ++wrappers;
    (*g)->Complete(id);
  }
  EXPECT_TRUE((*g)->AllComplete());
  EXPECT_EQ(wrappers, 16u);
  EXPECT_EQ((*g)->warning_counts().at("cpu-collective-wrapper"), 16);
}

TEST_F(RankGraphTest, RealOnecommCommSizeIsUint64) {
  auto g = RankGraph::Open(
      kData + "/astra-sim/onecomm_allreduce/one_comm_coll_node_allreduce.63.et", 63, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ((*g)->size(), 1u);
  NodeId id = *(*g)->ready().begin();
  auto op = (*g)->Load(id);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  EXPECT_EQ(op->kind, OpKind::kCollective);
  EXPECT_EQ(op->coll_type, CollectiveType::kAllReduce);
  EXPECT_EQ(op->comm_size, 65536u);
  EXPECT_EQ(op->involved_dim, (std::vector<bool>{true}));  // BoolList {values: [true]}
}

TEST_F(RankGraphTest, RealResnetMissingCommSizeNamesRankAndNode) {
  auto g = RankGraph::Open(kData + "/astra-sim/resnet_dp/Resnet50_DataParallel.1.et", 1, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto op = (*g)->Load(270);
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find(
                "[missing-comm-size] " + kData +
                "/astra-sim/resnet_dp/Resnet50_DataParallel.1.et (rank 1): node 270 "
                "'COMM_COLL_NODE_fc1000_ALLREDUCE'"),
            std::string::npos)
      << op.status().message();
}

}  // namespace
}  // namespace genie::workload
