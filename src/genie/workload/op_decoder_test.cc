// DecodeOp: every quirk rule, on hand-built nodes.
#include "genie/workload/op_decoder.h"

#include <gtest/gtest.h>

#include "genie/trace/attributes.h"

namespace genie::workload {
namespace {

using ChakraProtoMsg::Node;

Node Make(uint64_t id, ChakraProtoMsg::NodeType type) {
  Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  return n;
}

TEST(OpDecoderTest, ComputeDefaultsAsAstraSim) {
  Node n = Make(4, ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(250);
  n.add_data_deps(1);
  n.add_ctrl_deps(2);
  trace::AddInt64(&n, "num_ops", 1000);
  trace::AddUint64(&n, "tensor_size", 4096);
  std::vector<Quirk> quirks;
  auto op = DecodeOp(n, 3, "w.3.et", {}, &quirks);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  EXPECT_EQ(op->kind, OpKind::kCompute);
  EXPECT_EQ(op->duration_ns, 250'000);
  EXPECT_FALSE(op->is_cpu_op);
  EXPECT_EQ(op->num_ops, 1000u);
  EXPECT_EQ(op->tensor_size, 4096u);
  EXPECT_EQ(op->tensor_loc, 0);
  EXPECT_EQ(op->priority, 0);
  EXPECT_EQ(op->group, kWorldGroup);
  EXPECT_EQ(op->data_deps, (std::vector<NodeId>{1}));
  EXPECT_EQ(op->ctrl_deps, (std::vector<NodeId>{2}));
  EXPECT_TRUE(quirks.empty());
}

TEST(OpDecoderTest, SendRecvImpliedPeers) {
  Node s = Make(1, ChakraProtoMsg::COMM_SEND_NODE);
  trace::AddInt32(&s, "comm_dst", 4);
  trace::AddInt64(&s, "comm_size", 512);
  trace::AddInt32(&s, "comm_tag", 100438);
  std::vector<Quirk> quirks;
  auto op = DecodeOp(s, 0, "w.0.et", {}, &quirks);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->kind, OpKind::kSend);
  EXPECT_EQ(op->src, 0);
  EXPECT_EQ(op->dst, 4);
  EXPECT_EQ(op->tag, 100438);
  EXPECT_EQ(op->comm_size, 512u);
  Node r = Make(2, ChakraProtoMsg::COMM_RECV_NODE);
  trace::AddInt32(&r, "comm_src", 7);
  trace::AddInt64(&r, "comm_size", 512);
  op = DecodeOp(r, 5, "w.5.et", {}, &quirks);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->src, 7);
  EXPECT_EQ(op->dst, 5);
  EXPECT_EQ(op->tag, 0);
  // No peer at all: the missing side stays -1 (inspect reports it); size from tensor_size.
  Node bare = Make(56, ChakraProtoMsg::COMM_SEND_NODE);
  trace::AddUint64(&bare, "tensor_size", 1024);
  op = DecodeOp(bare, 0, "w.0.et", {}, &quirks);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->src, 0);
  EXPECT_EQ(op->dst, -1);
  EXPECT_EQ(op->comm_size, 1024u);
  ASSERT_EQ(quirks.size(), 1u);
  EXPECT_STREQ(quirks[0].name, kWarnP2pSizeFromTensorSize);
}

TEST(OpDecoderTest, CpuSideCollectiveWrapperBecomesCpuOp) {
  Node n = Make(726, ChakraProtoMsg::COMM_COLL_NODE);
  n.set_name("c10d::alltoall_base_(0)");
  n.set_duration_micros(55);
  trace::AddBool(&n, "is_cpu_op", true);
  std::vector<Quirk> quirks;
  auto op = DecodeOp(n, 0, "dlrm.0.et", {}, &quirks);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  EXPECT_EQ(op->kind, OpKind::kCompute);
  EXPECT_TRUE(op->is_cpu_op);
  EXPECT_EQ(op->duration_ns, 55'000);
  ASSERT_EQ(quirks.size(), 1u);
  EXPECT_STREQ(quirks[0].name, kWarnCpuCollectiveWrapper);
  EXPECT_NE(quirks[0].message.find("node 726"), std::string::npos);
  // The same node on the GPU (is_cpu_op as int 0) is an error: there is nothing to run.
  Node g = Make(9, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt32(&g, "is_cpu_op", 0);
  op = DecodeOp(g, 2, "x.2.et", {}, &quirks);
  ASSERT_FALSE(op.ok());
  EXPECT_NE(op.status().message().find("[missing-comm-type] x.2.et (rank 2): node 9"),
            std::string::npos)
      << op.status().message();
}

TEST(OpDecoderTest, CollectiveWithoutCommSizeIsAnErrorUnlessDefaulted) {
  Node n = Make(55, ChakraProtoMsg::COMM_COLL_NODE);
  n.set_name("COMM_COLL_NODE_fc1000_ALLREDUCE");
  trace::AddInt64(&n, "comm_type", 0);
  std::vector<Quirk> quirks;
  auto op = DecodeOp(n, 0, "Resnet50_DataParallel.0.et", {}, &quirks);
  ASSERT_FALSE(op.ok());
  EXPECT_EQ(op.status().message(),
            "[missing-comm-size] Resnet50_DataParallel.0.et (rank 0): node 55 "
            "'COMM_COLL_NODE_fc1000_ALLREDUCE': collective without comm_size; fix the trace or "
            "pass --default-comm-size BYTES");
  ReadOptions options;
  options.default_comm_size = 1 << 20;
  op = DecodeOp(n, 0, "Resnet50_DataParallel.0.et", options, &quirks);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->comm_size, 1u << 20);
  EXPECT_EQ(op->coll_type, CollectiveType::kAllReduce);
  ASSERT_EQ(quirks.size(), 1u);
  EXPECT_STREQ(quirks[0].name, kWarnDefaultCommSize);
  // A barrier needs no size.
  Node b = Make(52, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&b, "comm_type", 9);
  op = DecodeOp(b, 0, "b.0.et", {}, &quirks);
  ASSERT_TRUE(op.ok());
  EXPECT_EQ(op->coll_type, CollectiveType::kBarrier);
  EXPECT_EQ(op->comm_size, 0u);
}

TEST(OpDecoderTest, AttributeWidthsPgNameAndBadValues) {
  Node n = Make(512, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&n, "comm_type", 2);
  trace::AddUint64(&n, "comm_size", 65536);
  trace::AddString(&n, "pg_name", "1.0");
  trace::AddInt32(&n, "is_cpu_op", 0);
  trace::AddBoolList(&n, "involve_dims", {true, false});
  auto* a = n.add_attr();
  a->set_name("comm_priority");
  a->set_sint64_val(3);
  std::vector<Quirk> quirks;
  auto op = DecodeOp(n, 0, "a.0.et", {}, &quirks);
  ASSERT_TRUE(op.ok()) << op.status().ToString();
  EXPECT_EQ(op->coll_type, CollectiveType::kAllGather);
  EXPECT_EQ(op->comm_size, 65536u);
  EXPECT_EQ(op->group, 1);
  EXPECT_EQ(op->priority, 3);
  EXPECT_EQ(op->involved_dim, (std::vector<bool>{true, false}));

  Node bad_type = Make(1, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&bad_type, "comm_type", 42);
  trace::AddInt64(&bad_type, "comm_size", 1);
  EXPECT_NE(DecodeOp(bad_type, 0, "a.0.et", {}, &quirks).status().message().find(
                "[unknown-collective-type]"),
            std::string::npos);
  Node bad_size = Make(2, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&bad_size, "comm_type", 0);
  trace::AddString(&bad_size, "comm_size", "big");
  EXPECT_NE(DecodeOp(bad_size, 1, "a.1.et", {}, &quirks).status().message().find(
                "[bad-attribute] a.1.et (rank 1): node 2"),
            std::string::npos);
  Node bad_pg = Make(3, ChakraProtoMsg::COMM_COLL_NODE);
  trace::AddInt64(&bad_pg, "comm_type", 0);
  trace::AddInt64(&bad_pg, "comm_size", 8);
  trace::AddString(&bad_pg, "pg_name", "tp_group");
  EXPECT_FALSE(DecodeOp(bad_pg, 0, "a.0.et", {}, &quirks).ok());
  Node bad_node = Make(4, static_cast<ChakraProtoMsg::NodeType>(11));
  EXPECT_NE(DecodeOp(bad_node, 0, "a.0.et", {}, &quirks).status().message().find(
                "[unknown-node-type]"),
            std::string::npos);
}

// (CollectiveType's names: spec/collective_type_test.cc.)
TEST(OpDecoderTest, OpKindAndCtrlDepsNames) {
  EXPECT_STREQ(OpKindName(OpKind::kRecv), "recv");
  EXPECT_EQ(*ParseCtrlDeps("off"), ReadOptions::CtrlDeps::kOff);
  EXPECT_FALSE(ParseCtrlDeps("maybe").ok());
}

}  // namespace
}  // namespace genie::workload
