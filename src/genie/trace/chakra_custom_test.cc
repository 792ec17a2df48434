// Chakra custom collectives: the shipped lowering of the 8-rank MSCCL-IR ring reads into the
// same steps as the XML (plain, gzipped, named by prefix or by one rank's file); traces without
// the embedded MSCCL-IR, with unnamed nodes or impossible peers are errors naming file and node.
#include "genie/trace/chakra_custom.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "genie/trace/attributes.h"
#include "genie/trace/et_reader.h"
#include "genie/trace/et_writer.h"
#include "genie/trace/msccl_xml.h"
#include "tests/support/temp_dir.h"

namespace genie::trace {
namespace {

using ::genie::testing::TempDir;

namespace fs = std::filesystem;

const std::string kDir =
    std::string(GENIE_DATA_DIR) + "/traces/astra-sim/custom_ring_allreduce_8npus_1MB";

// A 2-rank all-reduce over 2 chunks: each rank sends the other's chunk and receive-reduces its
// own (gpu r, threadblock 0: step 0 sends chunk 1-r, step 1 receive-reduces chunk r).
const char kTwoRanks[] = R"(<algo name="two" nchannels="1" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="1">
  <gpu id="0"><tb id="0" send="1" recv="1" chan="0">
    <step s="0" type="s" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
  </tb></gpu>
  <gpu id="1"><tb id="0" send="0" recv="0" chan="0">
    <step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>
    <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1" hasdep="0"/>
  </tb></gpu>
</algo>)";

class ChakraCustomTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes <dir>/two.<r>.et for r = 0, 1 as ASTRA-sim lowers kTwoRanks: SEND, RECV, then the
  // COMP that reduces the RECV. `embed` puts the XML in the metadata; `edit` may spoil a node.
  void WriteTwoRanks(bool embed, void (*edit)(int rank, ChakraProtoMsg::Node*) = nullptr) {
    for (int r = 0; r < 2; ++r) {
      ChakraProtoMsg::GlobalMetadata meta = DefaultMetadata();
      if (embed) {
        Attr* a = meta.add_attr();
        a->set_name("input_file");
        a->set_string_val(kTwoRanks);
      }
      auto w = EtWriter::Create(Path("two." + std::to_string(r) + ".et"), meta);
      ASSERT_TRUE(w.ok()) << w.status().ToString();
      std::vector<ChakraProtoMsg::Node> nodes(3);
      nodes[0].set_id(10);
      nodes[0].set_name("COMM_SEND_NODE_tb0_step0");
      nodes[0].set_type(ChakraProtoMsg::COMM_SEND_NODE);
      AddInt64(&nodes[0], "comm_dst", 1 - r);
      AddInt64(&nodes[0], "comm_size", 512);
      nodes[1].set_id(11);
      nodes[1].set_name("COMM_RECV_NODE_tb0_step1");
      nodes[1].set_type(ChakraProtoMsg::COMM_RECV_NODE);
      AddInt64(&nodes[1], "comm_src", 1 - r);
      AddInt64(&nodes[1], "comm_size", 512);
      nodes[1].add_data_deps(10);
      nodes[2].set_id(12);
      nodes[2].set_name("COMP_NODE_tb0_step1");
      nodes[2].set_type(ChakraProtoMsg::COMP_NODE);
      nodes[2].add_data_deps(11);
      for (auto& n : nodes) {
        if (edit) edit(r, &n);
        ASSERT_TRUE((*w)->Write(n).ok());
      }
      ASSERT_TRUE((*w)->Close().ok());
    }
  }

  TempDir tmp_{"chakra-custom"};
  fs::path dir_ = tmp_.path();
};

void ExpectSameSteps(const spec::CustomAlgorithm& a, const spec::CustomAlgorithm& b) {
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.chunks, b.chunks);
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.collective, b.collective);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t r = 0; r < a.steps.size(); ++r) {
    ASSERT_EQ(a.steps[r].size(), b.steps[r].size()) << "rank " << r;
    for (size_t i = 0; i < a.steps[r].size(); ++i) {
      const spec::CustomStep& p = a.steps[r][i];
      const spec::CustomStep& q = b.steps[r][i];
      EXPECT_EQ(p.kind, q.kind) << "rank " << r << " step " << i;
      EXPECT_EQ(p.send_peer, q.send_peer) << "rank " << r << " step " << i;
      EXPECT_EQ(p.recv_peer, q.recv_peer) << "rank " << r << " step " << i;
      EXPECT_EQ(p.chunk, q.chunk) << "rank " << r << " step " << i;
      EXPECT_EQ(p.count, q.count) << "rank " << r << " step " << i;
      EXPECT_EQ(p.channel, q.channel) << "rank " << r << " step " << i;
      EXPECT_EQ(p.deps, q.deps) << "rank " << r << " step " << i;
      EXPECT_EQ(p.tb, q.tb) << "rank " << r << " step " << i;
      EXPECT_EQ(p.tb_step, q.tb_step) << "rank " << r << " step " << i;
    }
  }
}

TEST_F(ChakraCustomTest, ShippedTraceReadsTheSameStepsAsTheXml) {
  auto xml = ReadMscclXml(kDir + "/custom_allreduce.xml");
  auto et = ReadChakraCustom(kDir + "/custom_allreduce");
  ASSERT_TRUE(xml.ok()) << xml.status().ToString();
  ASSERT_TRUE(et.ok()) << et.status().ToString();
  EXPECT_EQ(et->source, kDir + "/custom_allreduce");
  ExpectSameSteps(*xml, *et);
  // Steps say which node they came from.
  EXPECT_EQ(et->steps[3][0].where.rfind(kDir + "/custom_allreduce.3.et: node ", 0), 0u)
      << et->steps[3][0].where;
}

TEST_F(ChakraCustomTest, GzippedTracesAndOneRankFileReadTheSame) {
  // Rewrite the shipped ranks gzipped, through trace/'s own reader and writer.
  for (int r = 0; r < 8; ++r) {
    auto in = EtReader::Open(kDir + "/custom_allreduce." + std::to_string(r) + ".et");
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    auto out = EtWriter::Create(Path("ring." + std::to_string(r) + ".et.gz"), (*in)->metadata(),
                                /*gzip=*/true);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    ChakraProtoMsg::Node n;
    uint64_t offset = 0;
    while (true) {
      auto more = (*in)->Next(&n, &offset);
      ASSERT_TRUE(more.ok()) << more.status().ToString();
      if (!*more) break;
      ASSERT_TRUE((*out)->Write(n).ok());
    }
    ASSERT_TRUE((*out)->Close().ok());
  }
  auto plain = ReadChakraCustom(kDir + "/custom_allreduce");
  auto gz = ReadChakraCustom(Path("ring"));
  auto one_file = ReadChakraCustom(Path("ring.5.et.gz"));
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  ASSERT_TRUE(gz.ok()) << gz.status().ToString();
  ASSERT_TRUE(one_file.ok()) << one_file.status().ToString();
  ExpectSameSteps(*plain, *gz);
  ExpectSameSteps(*plain, *one_file);
}

TEST_F(ChakraCustomTest, CompNodeMakesTheReceiveAReduction) {
  WriteTwoRanks(/*embed=*/true);
  auto a = ReadChakraCustom(Path("two"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->ranks, 2);
  for (int r = 0; r < 2; ++r) {
    const auto& steps = a->steps[static_cast<size_t>(r)];
    ASSERT_EQ(steps.size(), 2u);
    EXPECT_EQ(steps[0].kind, spec::CustomStepKind::kSend);
    EXPECT_EQ(steps[0].send_peer, 1 - r);
    EXPECT_EQ(steps[0].chunk, static_cast<uint32_t>(1 - r));
    EXPECT_EQ(steps[1].kind, spec::CustomStepKind::kRecvReduce);
    EXPECT_EQ(steps[1].recv_peer, 1 - r);
    EXPECT_EQ(steps[1].chunk, static_cast<uint32_t>(r));
    EXPECT_EQ(steps[1].deps, std::vector<uint32_t>{0});
  }
}

TEST_F(ChakraCustomTest, ErrorsNameTheFileAndNode) {
  WriteTwoRanks(/*embed=*/false);
  auto a = ReadChakraCustom(Path("two"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kUnsupported);
  EXPECT_NE(a.status().message().find(Path("two.0.et") + ": the trace's metadata does not carry "
                                      "the MSCCL-IR"),
            std::string::npos)
      << a.status().message();

  WriteTwoRanks(true, [](int rank, ChakraProtoMsg::Node* n) {
    if (rank == 1 && n->id() == 11) n->set_name("COMM_RECV_NODE");
  });
  a = ReadChakraCustom(Path("two"));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(Path("two.1.et") + ": node 11 at byte "), std::string::npos)
      << a.status().message();
  EXPECT_NE(a.status().message().find("does not name its MSCCL-IR threadblock and step"),
            std::string::npos)
      << a.status().message();

  WriteTwoRanks(true, [](int rank, ChakraProtoMsg::Node* n) {
    if (rank == 0 && n->id() == 10) n->mutable_attr(0)->set_int64_val(0);  // sends to itself
  });
  a = ReadChakraCustom(Path("two"));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find(Path("two.0.et") + ": node 10 at byte "), std::string::npos)
      << a.status().message();
  EXPECT_NE(a.status().message().find("comm_dst 0 is not another rank of the 2-rank algorithm"),
            std::string::npos)
      << a.status().message();

  WriteTwoRanks(true, [](int, ChakraProtoMsg::Node* n) {
    if (n->id() == 10) n->set_name("COMM_SEND_NODE_tb3_step0");
  });
  a = ReadChakraCustom(Path("two"));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("has no step 0 in threadblock 3 of gpu 0"),
            std::string::npos)
      << a.status().message();

  a = ReadChakraCustom(Path("nothing"));
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("custom collective '" + Path("nothing") + "'"),
            std::string::npos)
      << a.status().message();
}

}  // namespace
}  // namespace genie::trace
