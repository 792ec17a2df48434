// Custom algorithms: the shipped MSCCL-IR ring and its Chakra lowering both load, pass the
// checker and plan the same steps; broken XML is rejected with the line and the reason.
#include "genie/collective/custom.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"

namespace genie::collective {
namespace {

const std::string kDir =
    std::string(GENIE_DATA_DIR) + "/traces/astra-sim/custom_ring_allreduce_8npus_1MB";

CollectiveSpec Spec(const std::string& path, Bytes size = 1 << 20) {
  CollectiveSpec s;
  s.type = CollectiveType::kAllReduce;
  s.size = size;
  for (int r = 0; r < 8; ++r) s.group.push_back(r);
  s.options.algorithms = {Algorithm::kCustom};
  s.options.custom_path = path;
  return s;
}

TEST(Custom, MscclXmlLoadsAndPassesTheChecker) {
  auto algo = LoadCustom(kDir + "/custom_allreduce.xml");
  ASSERT_TRUE(algo.ok()) << algo.status().ToString();
  EXPECT_EQ((*algo)->ranks, 8);
  EXPECT_EQ((*algo)->chunks, 8);
  EXPECT_EQ((*algo)->collective, "allreduce");
  ASSERT_EQ((*algo)->steps[0].size(), 28u);  // 14 sends, 7 recv-reduce, 7 recv
  const CollectiveSpec spec = Spec(kDir + "/custom_allreduce.xml");
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
  // A ring all-reduce: 2(N-1) S on the wire, every message 1 MiB / 8 = 131,072 B.
  Bytes total = 0;
  for (const Schedule& s : *all) {
    total += BytesSent(s);
    for (const Step& st : s.steps) {
      if (HasSend(st.kind)) {
        EXPECT_EQ(st.send.length, 131072u);
        EXPECT_EQ(st.send_peer, (s.rank + 1) % 8);
      }
    }
  }
  EXPECT_EQ(total, 2u * 7 * (1 << 20));
}

TEST(Custom, ChakraTraceLoadsAndPlansTheSameStepsAsTheXml) {
  const CollectiveSpec xml = Spec(kDir + "/custom_allreduce.xml");
  const CollectiveSpec et = Spec(kDir + "/custom_allreduce");
  auto a = PlanAll(xml);
  auto b = PlanAll(et);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(CheckSchedules(et, *b).ok()) << CheckSchedules(et, *b).ToString();
  for (size_t r = 0; r < 8; ++r) {
    const Schedule& x = (*a)[r];
    const Schedule& y = (*b)[r];
    ASSERT_EQ(x.steps.size(), y.steps.size()) << "rank " << r;
    for (size_t i = 0; i < x.steps.size(); ++i) {
      const Step& p = x.steps[i];
      const Step& q = y.steps[i];
      EXPECT_EQ(p.kind, q.kind) << "rank " << r << " step " << i;
      EXPECT_EQ(p.send_peer, q.send_peer);
      EXPECT_EQ(p.recv_peer, q.recv_peer);
      EXPECT_EQ(p.send, q.send);
      EXPECT_EQ(p.recv, q.recv);
      EXPECT_EQ(p.send_tag, q.send_tag);
      EXPECT_EQ(p.recv_tag, q.recv_tag);
      EXPECT_EQ(p.deps, q.deps) << "rank " << r << " step " << i;
    }
  }
  // The trace's own message sizes agree with the planned ones at 1 MiB.
  EXPECT_EQ((*b)[0].steps[0].send.length, 131072u);
}

TEST(Custom, ScalesToOtherSizesChunksAndSlices) {
  CollectiveSpec spec = Spec(kDir + "/custom_allreduce.xml", 1000003);
  spec.options.chunks = 2;
  spec.options.slice_bytes = 16384;
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
}

std::string Broken(const std::string& from, const std::string& to) {
  std::ifstream in(kDir + "/custom_allreduce.xml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(Custom, BrokenXmlIsRejectedWithLineAndReason) {
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
  // Not XML at all.
  r = ParseMscclXml("<algo><gpu id=\"0\">", "bad.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not valid XML"), std::string::npos);
}

TEST(Custom, PathsResolveAgainstTheConfigFolderThenTheWorkingDirectory) {
  auto p = ResolveCustomPath("custom_allreduce.xml", kDir);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, kDir + "/custom_allreduce.xml");
  p = ResolveCustomPath("custom_allreduce", kDir);  // a Chakra prefix
  ASSERT_TRUE(p.ok());
  p = ResolveCustomPath("nowhere.xml", "/tmp/cfg");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/tmp/cfg/nowhere.xml"), std::string::npos);
  EXPECT_NE(p.status().message().find(std::filesystem::current_path().string() + "/nowhere.xml"),
            std::string::npos)
      << p.status().message();
}

TEST(Custom, WrongGroupSizeOrCollectiveIsAnError) {
  CollectiveSpec spec = Spec(kDir + "/custom_allreduce.xml");
  spec.group = {0, 1, 2, 3};
  auto r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("written for 8 ranks"), std::string::npos);
  spec = Spec(kDir + "/custom_allreduce.xml");
  spec.type = CollectiveType::kAllGather;
  r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
}

}  // namespace
}  // namespace genie::collective
