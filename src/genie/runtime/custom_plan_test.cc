// Planning the custom algorithms genie ships as files, loaded as run setup loads them
// (trace/custom_files.h): the MSCCL-IR ring and its Chakra lowering plan the same steps and pass
// the checker at any size, chunk count and slice, and a file that does not fit the collective is
// an error naming it. (collective/custom_test.cc plans hand-built algorithms without files.)
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "genie/collective/custom.h"
#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"
#include "genie/trace/custom_files.h"

namespace genie::collective {
namespace {

using spec::CustomAlgorithm;

const std::string kDir =
    std::string(GENIE_DATA_DIR) + "/traces/astra-sim/custom_ring_allreduce_8npus_1MB";


std::shared_ptr<const CustomAlgorithm> Load(const std::string& path) {
  auto a = trace::LoadCustomAlgorithm(path);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : nullptr;
}

CollectiveSpec Spec(std::shared_ptr<const CustomAlgorithm> algorithm, Bytes size = 1 << 20) {
  CollectiveSpec s;
  s.type = CollectiveType::kAllReduce;
  s.size = size;
  for (int r = 0; r < (algorithm ? algorithm->ranks : 8); ++r) s.group.push_back(r);
  s.options.algorithms = {Algorithm::kCustom};
  s.options.custom = std::move(algorithm);
  return s;
}

TEST(CustomFiles, MscclRingPlansAndPassesTheChecker) {
  const CollectiveSpec spec = Spec(Load(kDir + "/custom_allreduce.xml"));
  ASSERT_NE(spec.options.custom, nullptr);
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
  // A ring all-reduce: 2(N-1) S on the wire, every message 1 MiB / 8 = 131,072 B.
  Bytes total = 0;
  for (const Schedule& s : *all) {
    EXPECT_EQ(s.steps.size(), 28u);
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

TEST(CustomFiles, ChakraLoweringPlansTheSameStepsAsTheXml) {
  const CollectiveSpec xml = Spec(Load(kDir + "/custom_allreduce.xml"));
  const CollectiveSpec et = Spec(Load(kDir + "/custom_allreduce"));
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

TEST(CustomFiles, ScalesToOtherSizesChunksAndSlices) {
  CollectiveSpec spec = Spec(Load(kDir + "/custom_allreduce.xml"), 1000003);
  spec.options.chunks = 2;
  spec.options.slice_bytes = 16384;
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
}

TEST(CustomFiles, WrongGroupSizeOrCollectiveIsAnError) {
  CollectiveSpec spec = Spec(Load(kDir + "/custom_allreduce.xml"));
  spec.group = {0, 1, 2, 3};
  auto r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(kDir + "/custom_allreduce.xml is written for 8 ranks"),
            std::string::npos)
      << r.status().message();
  spec = Spec(Load(kDir + "/custom_allreduce.xml"));
  spec.type = CollectiveType::kAllGather;
  r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("custom algorithms run all-reduce only"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace genie::collective
