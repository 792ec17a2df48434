// MSCCL-IR XML: the shipped 8-rank ring reads into the steps its XML spells out; broken XML is
// rejected with the file, line and reason.
#include "genie/trace/msccl_xml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace genie::trace {
namespace {

const std::string kXml = std::string(GENIE_DATA_DIR) +
                         "/traces/astra-sim/custom_ring_allreduce_8npus_1MB/custom_allreduce.xml";

TEST(MscclXml, ShippedRingReadsAsARing) {
  auto a = ReadMscclXml(kXml);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->source, kXml);
  EXPECT_EQ(a->name, "allreduce_ring_1channelsperring");
  EXPECT_EQ(a->collective, "allreduce");
  EXPECT_EQ(a->ranks, 8);
  EXPECT_EQ(a->chunks, 8);
  EXPECT_EQ(a->channels, 1);
  ASSERT_EQ(a->steps.size(), 8u);
  for (int r = 0; r < 8; ++r) {
    const auto& steps = a->steps[static_cast<size_t>(r)];
    ASSERT_EQ(steps.size(), 28u) << "rank " << r;  // 14 sends, 7 recv-reduce, 7 recv
    int sends = 0, reduces = 0, recvs = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const spec::CustomStep& s = steps[i];
      EXPECT_EQ(s.count, 1u);
      EXPECT_LT(s.chunk, 8u);
      EXPECT_EQ(s.channel, 0);
      EXPECT_GE(s.tb, 0);
      EXPECT_GE(s.tb_step, 0);
      EXPECT_EQ(s.where.rfind(kXml + ":", 0), 0u) << s.where;
      if (s.kind == spec::CustomStepKind::kSend) {
        ++sends;
        EXPECT_EQ(s.send_peer, (r + 1) % 8);
      } else {
        if (s.kind == spec::CustomStepKind::kRecvReduce) ++reduces;
        else if (s.kind == spec::CustomStepKind::kRecv) ++recvs;
        else ADD_FAILURE() << "unexpected kind at " << s.where;
        EXPECT_EQ(s.recv_peer, (r + 7) % 8);
      }
      // Steps of the ring's one threadblock run in order.
      EXPECT_EQ(s.tb_step, static_cast<int>(i));
      if (i > 0) {
        EXPECT_EQ(s.deps, std::vector<uint32_t>{static_cast<uint32_t>(i - 1)});
      } else {
        EXPECT_TRUE(s.deps.empty());
      }
    }
    EXPECT_EQ(sends, 14);
    EXPECT_EQ(reduces, 7);
    EXPECT_EQ(recvs, 7);
  }
  // gpu 0, threadblock 0, step 1 (line 5): receive-reduce chunk 7 from rank 7.
  const spec::CustomStep& s = a->steps[0][1];
  EXPECT_EQ(s.kind, spec::CustomStepKind::kRecvReduce);
  EXPECT_EQ(s.chunk, 7u);
  EXPECT_EQ(s.tb_step, 1);
  EXPECT_EQ(s.where, kXml + ":5");
}

std::string Broken(const std::string& from, const std::string& to) {
  std::ifstream in(kXml);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(MscclXml, BrokenXmlIsRejectedWithLineAndReason) {
  // gpu 1's threadblock sends to rank 9: reported at its first send step (line 36).
  auto r = ParseMscclXml(Broken(R"(<tb id="0" send="2" recv="0" chan="0">)",
                                R"(<tb id="0" send="9" recv="0" chan="0">)"),
                         "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.xml:36: step 0 of gpu 1 sends to rank 9"),
            std::string::npos)
      << r.status().message();
  // An unknown op on gpu 0 step 1 (line 5).
  r = ParseMscclXml(Broken(R"(<step s="1" type="rrc")", R"(<step s="1" type="xyz")"), "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.xml:5: unknown step type 'xyz'"), std::string::npos)
      << r.status().message();
  // A dependency on a threadblock that does not exist.
  r = ParseMscclXml(Broken(R"(<step s="2" type="s" srcbuf="i" srcoff="7" dstbuf="i" dstoff="7" cnt="1" depid="-1" deps="-1" hasdep="0"/>)",
                           R"(<step s="2" type="s" srcbuf="i" srcoff="7" dstbuf="i" dstoff="7" cnt="1" depid="4" deps="1" hasdep="1"/>)"),
                    "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.xml:6: depends on step 1 of threadblock 4"),
            std::string::npos)
      << r.status().message();
  // A range past the buffer's 8 chunks.
  r = ParseMscclXml(Broken(R"(srcoff="7" dstbuf="i" dstoff="7" cnt="1")",
                           R"(srcoff="7" dstbuf="i" dstoff="7" cnt="2")"),
                    "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.xml:5: chunks [7, 9) fall outside the 8 chunks"),
            std::string::npos)
      << r.status().message();
  // Not XML at all.
  r = ParseMscclXml("<algo><gpu id=\"0\">", "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not valid XML"), std::string::npos);
}

// Found by running edge inputs through fuzz/msccl_xml_fuzz: numbers in the file sized allocations (ngpus, nchunksperloop),
// wrapped in int arithmetic (srcoff + cnt) or named channels no connection has (chan). Each is
// now an error naming the file, the line and the number.
TEST(MscclXml, NumbersInTheFileAreBoundedBeforeTheySizeAnything) {
  const std::string two_gpus =
      R"(<gpu id="0"><tb id="0" send="1" recv="1" chan="0">)"
      R"(<step s="0" type="s" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1"/></tb></gpu>)"
      R"(<gpu id="1"><tb id="0" send="0" recv="0" chan="0">)"
      R"(<step s="0" type="r" srcbuf="i" srcoff="0" dstbuf="i" dstoff="0" cnt="1"/></tb></gpu>)";
  struct Case {
    std::string xml;
    std::string message;
  };
  const Case cases[] = {
      // 2^31 ranks of steps (48 GiB) for a file of one <gpu>.
      {R"(<algo ngpus="2147483647" nchunksperloop="1"><gpu id="0"/></algo>)",
       "bad.xml:1: ngpus is 2147483647 but the file has 1 <gpu> elements"},
      // Two billion chunks: the planner cut every buffer into that many ranges.
      {R"(<algo ngpus="2" nchunksperloop="2000000000" coll="allreduce">)" + two_gpus + "</algo>",
       "bad.xml:1: nchunksperloop is 2000000000, more than genie plans (65536)"},
      {R"(<algo ngpus="2" nchunksperloop="2" nchannels="100000">)" + two_gpus + "</algo>",
       "bad.xml:1: nchannels is 100000, more than genie opens per peer (65535)"},
      // srcoff + cnt overflowed int and the range passed the check.
      {R"(<algo ngpus="2" nchunksperloop="2">)" +
           std::string(two_gpus).replace(two_gpus.find("srcoff=\"0\""), 10,
                                         "srcoff=\"2147483647\"") +
           "</algo>",
       "bad.xml:1: chunks [2147483647, 2147483648) fall outside the 2 chunks"},
      {R"(<algo ngpus="2" nchunksperloop="2">)" +
           std::string(two_gpus).replace(two_gpus.find("chan=\"0\""), 8, "chan=\"-1\"") +
           "</algo>",
       "bad.xml:1: threadblock 0 of gpu 0 has chan -1 (channels are 0 to 65534)"},
  };
  for (const Case& c : cases) {
    Result<spec::CustomAlgorithm> r = Status::Internal("not run");
    ASSERT_NO_THROW(r = ParseMscclXml(c.xml, "bad.xml")) << c.xml;
    ASSERT_FALSE(r.ok()) << c.xml;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos)
        << c.xml << "\n -> " << r.status().message();
  }
  // A channel past nchannels is still a channel: the algorithm asks for as many as it uses.
  auto wide = ParseMscclXml(R"(<algo ngpus="2" nchunksperloop="2" nchannels="1">)" +
                                std::string(two_gpus).replace(two_gpus.find("chan=\"0\""), 8,
                                                              "chan=\"3\"") +
                                "</algo>",
                            "wide.xml");
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->channels, 4);
}

TEST(MscclXml, MissingFileNamesThePath) {
  auto r = ReadMscclXml("/nonexistent/algo.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("/nonexistent/algo.xml: ", 0), 0u)
      << r.status().message();
}

}  // namespace
}  // namespace genie::trace
