// Planning a custom algorithm handed over as data: the shipped MSCCL-IR ring and its Chakra
// lowering (loaded once, by the test, as a caller would) plan the same steps and pass the
// checker at any size, chunk count and slice; a hand-built algorithm plans without any file; an
// algorithm that does not fit the collective, or none at all, is an error, never a crash.
#include "genie/collective/custom.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"
#include "genie/trace/custom_files.h"

namespace genie::collective {
namespace {

using trace::CustomAlgorithm;
using trace::CustomStep;
using trace::CustomStepKind;

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

TEST(Custom, MscclRingPlansAndPassesTheChecker) {
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

TEST(Custom, ChakraLoweringPlansTheSameStepsAsTheXml) {
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

TEST(Custom, ScalesToOtherSizesChunksAndSlices) {
  CollectiveSpec spec = Spec(Load(kDir + "/custom_allreduce.xml"), 1000003);
  spec.options.chunks = 2;
  spec.options.slice_bytes = 16384;
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
}

CustomStep StepOf(CustomStepKind kind, int peer, uint32_t chunk, std::vector<uint32_t> deps) {
  CustomStep s;
  s.kind = kind;
  (kind == CustomStepKind::kSend ? s.send_peer : s.recv_peer) = peer;
  s.chunk = chunk;
  s.deps = std::move(deps);
  return s;
}

// Two ranks, two chunks: each sends the other's chunk, receive-reduces its own, sends the
// reduced chunk back and receives the other's result.
std::shared_ptr<CustomAlgorithm> TwoRanks() {
  auto a = std::make_shared<CustomAlgorithm>();
  a->source = "two-ranks (built in the test)";
  a->collective = "allreduce";
  a->ranks = 2;
  a->chunks = 2;
  a->steps.resize(2);
  for (int r = 0; r < 2; ++r) {
    const int peer = 1 - r;
    const auto mine = static_cast<uint32_t>(r), theirs = static_cast<uint32_t>(peer);
    auto& s = a->steps[static_cast<size_t>(r)];
    s.push_back(StepOf(CustomStepKind::kSend, peer, theirs, {}));
    s.push_back(StepOf(CustomStepKind::kRecvReduce, peer, mine, {0}));
    s.push_back(StepOf(CustomStepKind::kSend, peer, mine, {1}));
    s.push_back(StepOf(CustomStepKind::kRecv, peer, theirs, {2}));
  }
  return a;
}

TEST(Custom, AHandBuiltAlgorithmPlansWithoutAnyFile) {
  const CollectiveSpec spec = Spec(TwoRanks(), 4096);
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_TRUE(CheckSchedules(spec, *all).ok()) << CheckSchedules(spec, *all).ToString();
  EXPECT_EQ(BytesSent((*all)[0]), 4096u);  // two half-buffer messages
}

TEST(Custom, WrongGroupSizeOrCollectiveIsAnError) {
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

TEST(Custom, NoAlgorithmOrAMalformedOneIsAnErrorNotACrash) {
  CollectiveSpec spec = Spec(nullptr);
  auto r = Plan(spec, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("none was loaded"), std::string::npos)
      << r.status().message();

  auto past_the_end = TwoRanks();
  past_the_end->steps[1][2].chunk = 1;
  past_the_end->steps[1][2].count = 2;
  past_the_end->steps[1][2].where = "two.xml:9";
  r = Plan(Spec(past_the_end), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("two.xml:9: chunks [1, 3) fall outside the 2 chunks"),
            std::string::npos)
      << r.status().message();

  auto bad_peer = TwoRanks();
  bad_peer->steps[0][0].send_peer = 5;
  r = Plan(Spec(bad_peer), 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("two-ranks (built in the test): rank 0 step 0"),
            std::string::npos)
      << r.status().message();

  auto later_dep = TwoRanks();
  later_dep->steps[1][0].deps = {3};
  r = Plan(Spec(later_dep), 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not an earlier step of rank 1"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace genie::collective
