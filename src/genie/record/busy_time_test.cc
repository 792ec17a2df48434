#include "genie/record/busy_time.h"

#include <gtest/gtest.h>

namespace genie::record {
namespace {

TEST(UnionLengthTest, DisjointIntervalsAdd) {
  EXPECT_EQ(UnionLength({{0, 10}, {20, 25}}), 15);
}

TEST(UnionLengthTest, OverlapsCountOnce) {
  // [0,10) and [5,15) overlap on 5 ns; [12,30) extends the run; [40,50) is separate;
  // [42,44) nests inside it. Union = [0,30) + [40,50) = 40.
  EXPECT_EQ(UnionLength({{40, 50}, {5, 15}, {0, 10}, {42, 44}, {12, 30}}), 40);
}

TEST(UnionLengthTest, TouchingIntervalsMerge) {
  EXPECT_EQ(UnionLength({{0, 10}, {10, 20}}), 20);
}

TEST(UnionLengthTest, EmptyAndInvertedCountNothing) {
  EXPECT_EQ(UnionLength({}), 0);
  EXPECT_EQ(UnionLength({{5, 5}, {9, 3}}), 0);
  EXPECT_EQ(UnionLength({{9, 3}, {0, 4}}), 4);
}

OpEvent Ev(int rank, OpKind kind, TimeNs start, TimeNs end, bool cpu = false, int iteration = 0) {
  OpEvent e;
  e.rank = rank;
  e.iteration = iteration;
  e.kind = kind;
  e.start = start;
  e.end = end;
  e.is_cpu_op = cpu;
  return e;
}

TEST(SummarizeRankTest, ComputeIsGpuOnlyAndCommIsAUnion) {
  std::vector<OpEvent> events = {
      Ev(0, OpKind::kCompute, 0, 100),
      Ev(0, OpKind::kCompute, 0, 50, /*cpu=*/true),   // CPU op: not GPU compute
      Ev(0, OpKind::kCollective, 100, 300),
      Ev(0, OpKind::kRecv, 250, 400),                  // overlaps the collective by 50
      Ev(0, OpKind::kSend, 500, 600),
      Ev(0, OpKind::kCompute, 400, 450),
      Ev(0, OpKind::kMemLoad, 450, 500),               // neither compute nor communication
      Ev(1, OpKind::kCompute, 0, 999),                 // another rank
      Ev(0, OpKind::kCollective, 0, 999, false, 1),    // another iteration
  };
  RankSummary s = SummarizeRank(events, 0, 0, 0, 600);
  EXPECT_EQ(s.rank, 0);
  EXPECT_EQ(s.iteration, 0);
  EXPECT_EQ(s.start, 0);
  EXPECT_EQ(s.finish, 600);
  EXPECT_EQ(s.compute_ns, 150);
  EXPECT_EQ(s.comm_ns, 400);  // [100,400) + [500,600)
  EXPECT_EQ(s.exposed_comm_ns, 450);
}

TEST(SummarizeRankTest, ExposedIsSpanMinusCompute) {
  std::vector<OpEvent> events = {Ev(2, OpKind::kCompute, 1000, 1300, false, 3)};
  RankSummary s = SummarizeRank(events, 2, 3, 1000, 2000);
  EXPECT_EQ(s.compute_ns, 300);
  EXPECT_EQ(s.comm_ns, 0);
  EXPECT_EQ(s.exposed_comm_ns, 700);
}

}  // namespace
}  // namespace genie::record
