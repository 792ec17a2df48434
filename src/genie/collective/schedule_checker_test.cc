// The checker must catch broken schedules: each test breaks one real plan in one way and
// expects the specific complaint.
#include "genie/collective/schedule_checker.h"

#include <gtest/gtest.h>

#include "genie/collective/buffer_layout.h"
#include "genie/collective/planner.h"

namespace genie::collective {
namespace {

CollectiveSpec RingAllReduce(int n, Bytes size) {
  CollectiveSpec s;
  s.type = CollectiveType::kAllReduce;
  s.size = size;
  for (int i = 0; i < n; ++i) s.group.push_back(10 + 2 * i);  // non-contiguous ranks
  s.options.algorithms = {Algorithm::kRing};
  return s;
}

std::vector<Schedule> PlanOrDie(const CollectiveSpec& s) {
  auto all = PlanAll(s);
  EXPECT_TRUE(all.ok()) << all.status().ToString();
  return std::move(all).value();
}

// Removes step i, keeping phases and dependency indices consistent.
void RemoveStep(Schedule* s, uint32_t i) {
  s->steps.erase(s->steps.begin() + i);
  for (Step& st : s->steps) {
    std::vector<uint32_t> deps;
    for (uint32_t d : st.deps) {
      if (d == i) continue;
      deps.push_back(d > i ? d - 1 : d);
    }
    st.deps = deps;
  }
  for (Phase& p : s->phases) {
    if (p.begin > i) --p.begin;
    if (p.end > i) --p.end;
  }
}

std::string Check(const CollectiveSpec& spec, const std::vector<Schedule>& all) {
  const Status st = CheckSchedules(spec, all);
  return st.ok() ? "ok" : st.message();
}

TEST(Checker, AcceptsTheRealPlan) {
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  EXPECT_EQ(Check(spec, PlanOrDie(spec)), "ok");
}

TEST(Checker, CatchesADroppedSend) {
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  auto all = PlanOrDie(spec);
  ASSERT_EQ(all[1].steps[0].kind, StepKind::kSend);
  RemoveStep(&all[1], 0);
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("rank 14"), std::string::npos) << err;  // rank 12's successor waits
}

TEST(Checker, CatchesASwappedPeer) {
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  auto all = PlanOrDie(spec);
  // Rank 10 sends its first block to 14 instead of 12.
  ASSERT_EQ(all[0].steps[0].send_peer, 12);
  all[0].steps[0].send_peer = 14;
  const std::string err = Check(spec, all);
  EXPECT_NE(err, "ok");
  EXPECT_TRUE(err.find("deadlock") != std::string::npos ||
              err.find("no step receives") != std::string::npos ||
              err.find("bytes") != std::string::npos)
      << err;
}

TEST(Checker, CatchesAWrongByteRange) {
  // Ring all-reduce of 4 x 250 bytes: shift one forwarded range by one block. Sizes still
  // match, so only the content tracking can notice.
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  auto all = PlanOrDie(spec);
  Step& s = all[2].steps[1];
  ASSERT_EQ(s.kind, StepKind::kRecvReduceSend);
  s.recv.offset = (s.recv.offset + 250) % 1000;
  s.send = s.recv;
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("must hold"), std::string::npos) << err;
}

TEST(Checker, CatchesASizeMismatch) {
  const CollectiveSpec spec = RingAllReduce(4, 1024);  // blocks of 64 floats
  auto all = PlanOrDie(spec);
  all[0].steps[0].send.length -= 1;
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("expects 256 bytes"), std::string::npos) << err;
}

TEST(Checker, CatchesATagMismatch) {
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  auto all = PlanOrDie(spec);
  all[0].steps[0].send_tag += 100;
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
}

TEST(Checker, CatchesAnUnorderedOverwrite) {
  // Halving-doubling: the all-gather half receives into bytes an earlier step sends; cut every
  // dependency of that receive and the checker must call it a race.
  CollectiveSpec spec = RingAllReduce(4, 1024);
  spec.options.algorithms = {Algorithm::kHalvingDoubling};
  auto all = PlanOrDie(spec);
  Schedule& s = all[0];
  bool cut = false;
  for (size_t i = 0; i < s.steps.size() && !cut; ++i) {
    Step& st = s.steps[i];
    if (st.kind != StepKind::kRecv) continue;
    for (size_t j = 0; j < i; ++j) {
      const Step& o = s.steps[j];
      if (o.kind == StepKind::kSend && o.send.offset < st.recv.offset + st.recv.length &&
          st.recv.offset < o.send.offset + o.send.length) {
        st.deps.clear();
        cut = true;
        break;
      }
    }
  }
  ASSERT_TRUE(cut);
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("nothing ordering them"), std::string::npos) << err;
}

TEST(Checker, CatchesADoubleReduction) {
  // Direct reduce-scatter on 3 ranks: make one rank's send go to the owner twice by turning
  // another block's send into the owner's block; the owner's sum gets a term twice/misses one.
  CollectiveSpec spec = RingAllReduce(3, 300);
  spec.type = CollectiveType::kReduceScatter;
  spec.options.algorithms = {Algorithm::kDirect};
  auto all = PlanOrDie(spec);
  // Rank 10 (index 0) sends block 1 to rank 12 and block 2 to rank 14; make the block sent to
  // 12 the wrong one (block 2's bytes).
  Step& s = all[0].steps[0];
  ASSERT_EQ(s.kind, StepKind::kSend);
  ASSERT_EQ(s.send_peer, 12);
  s.send.offset = 200;
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("rank 12 ends with bytes [100, 200)"), std::string::npos) << err;
}

TEST(Checker, CatchesAStepOutsideTheGroup) {
  const CollectiveSpec spec = RingAllReduce(4, 1000);
  auto all = PlanOrDie(spec);
  all[3].steps[0].send_peer = 11;
  const std::string err = Check(spec, all);
  EXPECT_NE(err.find("outside the group"), std::string::npos) << err;
}

TEST(Layout, AllGatherBlocksAreChunkMajor) {
  CollectiveSpec spec = RingAllReduce(2, 10);
  spec.type = CollectiveType::kAllGather;
  spec.options.chunks = 2;
  const BufferLayout l = Layout(spec, 1);
  EXPECT_EQ(l.buffer_bytes, 20u);
  // Chunk 0 = 5 bytes per rank at [0, 10), chunk 1 at [10, 20); rank 12 owns the second block.
  ASSERT_EQ(l.initial.size(), 2u);
  EXPECT_EQ(l.initial[0].range, (ByteRange{5, 5}));
  EXPECT_EQ(l.initial[1].range, (ByteRange{15, 5}));
  ASSERT_EQ(l.final.size(), 4u);
  EXPECT_EQ(l.final[2].range, (ByteRange{10, 5}));
  EXPECT_EQ(l.final[2].sources[0], (Source{10, 10}));
}

TEST(Layout, ExpectedPatternRepeatsEveryPeriodForAnyOffsets) {
  Region r;
  r.range = {12, 4 * 100};
  r.sources = {{0, 0}, {3, 40}, {5, 1000004}, {4095, 8}};
  const auto pattern = ExpectedPattern(r);
  for (Bytes i = 0; i < r.range.length; i += 4) {
    EXPECT_EQ(pattern[(i / 4) % kElementPeriod], ExpectedElement(r, r.range.offset + i)) << i;
  }
}

TEST(Layout, ExpectedElementSumsContributions) {
  const CollectiveSpec spec = RingAllReduce(3, 64);
  const BufferLayout l = Layout(spec, 0);
  ASSERT_EQ(l.final.size(), 1u);
  const float want = InitialElement(10, 8) + InitialElement(12, 8) + InitialElement(14, 8);
  EXPECT_EQ(ExpectedElement(l.final[0], 8), want);
}

}  // namespace
}  // namespace genie::collective
