#include "genie/report/prediction.h"

#include <gtest/gtest.h>

#include <sstream>

namespace genie::report {
namespace {

using record::OpEvent;
using record::RankSummary;

OpEvent AllReduce(int rank, int iteration, TimeNs start, TimeNs end) {
  OpEvent e;
  e.rank = rank;
  e.iteration = iteration;
  e.kind = OpKind::kCollective;
  e.coll_type = CollectiveType::kAllReduce;
  e.size = 1 << 20;
  e.group_size = 2;
  e.start = start;
  e.end = end;
  return e;
}

TEST(PredictionTest, FlagsOnlyIterationsAndOpsSlowerThanTheThreshold) {
  // Expected: 1 ms per iteration, the all-reduce in 1 ms.
  Expectation expected =
      ExpectationFromSimulation("model", 1'000'000, {AllReduce(0, 0, 0, 1'000'000)});
  std::vector<RankSummary> ranks = {
      {0, -1, 0, 5'000'000, 0, 0, 0},         // warm-up: not compared
      {0, 0, 0, 1'100'000, 0, 0, 0},          // 1.1x: healthy
      {0, 1, 2'000'000, 4'000'000, 0, 0, 0},  // 2x: slow
  };
  std::vector<OpEvent> ops = {AllReduce(0, 0, 0, 1'100'000), AllReduce(0, 1, 2'000'000, 4'000'000)};
  Comparison c = Compare(ops, ranks, expected, 0.25);
  ASSERT_EQ(c.iterations.size(), 2u);
  EXPECT_FALSE(c.iterations[0].slow);
  EXPECT_NEAR(c.iterations[0].ratio, 1.1, 1e-9);
  EXPECT_TRUE(c.iterations[1].slow);
  EXPECT_EQ(c.flagged, 1);
  ASSERT_EQ(c.iterations[1].ops.size(), 1u);
  EXPECT_EQ(c.iterations[1].ops[0].type, "all_reduce");
  EXPECT_NEAR(c.iterations[1].ops[0].slowdown, 2.0, 1e-9);
  EXPECT_TRUE(c.iterations[1].ops[0].slow);
  EXPECT_FALSE(c.iterations[0].ops[0].slow);
  nlohmann::json j = ToJson(c);
  EXPECT_EQ(j["flagged_iterations"], nlohmann::json::array({1}));
  EXPECT_EQ(ToJson(ComparisonFromJson(j)), j);
  const std::string csv = ToCsv(c);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "iteration,measured_step_ns,expected_step_ns,ratio,type,measured_busbw_gbps,"
            "expected_busbw_gbps,slow");
  EXPECT_NE(csv.find("\n1,2000000,1000000,2.0000,all_reduce,"), std::string::npos);
  std::ostringstream out;
  PrintComparison(out, c);
  EXPECT_NE(out.str().find("SLOW"), std::string::npos);
  EXPECT_NE(out.str().find("1 of 2 iterations"), std::string::npos);
  EXPECT_EQ(out.str().find("what-if"), std::string::npos);
  // The prediction under the run's compute faults, beside the healthy one judged.
  c.iterations[1].what_if_ns = 3'000'000;
  j = ToJson(c);
  EXPECT_EQ(j["iterations"][1]["what_if_step_ns"], 3'000'000);
  EXPECT_FALSE(j["iterations"][0].contains("what_if_step_ns"));
  EXPECT_EQ(ToJson(ComparisonFromJson(j)), j);
  std::ostringstream with;
  PrintComparison(with, c);
  EXPECT_NE(with.str().find("compute faults (not what is judged above): 1: 3.000 ms"),
            std::string::npos)
      << with.str();
}

// A point-to-point transfer is compared by its recv: the real send completed as soon as the
// socket buffer held it, the model's when it arrived.
TEST(PredictionTest, PointToPointIsComparedByItsRecv) {
  auto p2p = [](OpKind kind, int rank, TimeNs end) {
    OpEvent e;
    e.rank = rank;
    e.iteration = 0;
    e.kind = kind;
    e.size = 1 << 20;
    e.start = 0;
    e.end = end;
    return e;
  };
  Expectation expected = ExpectationFromSimulation(
      "model", 1'000'000, {p2p(OpKind::kSend, 0, 1'000'000), p2p(OpKind::kRecv, 1, 1'000'000)});
  std::vector<RankSummary> ranks = {{0, 0, 0, 1'000'000, 0, 0, 0}};
  Comparison c = Compare({p2p(OpKind::kSend, 0, 10'000), p2p(OpKind::kRecv, 1, 1'000'000)}, ranks,
                         expected, 0.25);
  ASSERT_EQ(c.iterations.size(), 1u);
  ASSERT_EQ(c.iterations[0].ops.size(), 1u);
  EXPECT_EQ(c.iterations[0].ops[0].type, "recv");
  EXPECT_NEAR(c.iterations[0].ops[0].slowdown, 1.0, 1e-9);
}

// An iteration predicted on its own (its ranks' measured start skew given to the model) is
// judged against that prediction; the others against the common one.
TEST(PredictionTest, AnIterationPredictedOnItsOwnIsJudgedByIt) {
  Expectation expected =
      ExpectationFromSimulation("model", 1'000'000, {AllReduce(0, 0, 0, 1'000'000)});
  expected.step_ns_of_iteration[1] = 1'600'000;  // its last rank started 0.6 ms late
  std::vector<RankSummary> ranks = {
      {0, 0, 0, 1'500'000, 0, 0, 0},          // 1.5x the common step: slow
      {0, 1, 2'000'000, 3'500'000, 0, 0, 0},  // 1.5 ms against its own 1.6 ms: healthy
  };
  Comparison c = Compare({}, ranks, expected, 0.25);
  ASSERT_EQ(c.iterations.size(), 2u);
  EXPECT_EQ(c.iterations[0].expected_ns, 1'000'000);
  EXPECT_TRUE(c.iterations[0].slow);
  EXPECT_EQ(c.iterations[1].expected_ns, 1'600'000);
  EXPECT_NEAR(c.iterations[1].ratio, 1.5 / 1.6, 1e-9);
  EXPECT_FALSE(c.iterations[1].slow);
  EXPECT_EQ(c.flagged, 1);
}

// An iteration whose hosts counted TCP retransmission timeouts is marked RTO with their count,
// each host once however many of its ranks read its counter.
TEST(PredictionTest, AnIterationWithRetransmissionTimeoutsIsMarkedRto) {
  Expectation expected =
      ExpectationFromSimulation("model", 1'000'000, {AllReduce(0, 0, 0, 1'000'000)});
  std::vector<RankSummary> ranks = {
      {0, 0, 0, 1'000'000, 0, 0, 0},
      {1, 0, 0, 1'000'000, 0, 0, 0},
      {0, 1, 2'000'000, 3'400'000, 0, 0, 0},
      {1, 1, 2'000'000, 3'400'000, 0, 0, 0},
  };
  // Iteration 1: ranks 0 and 1 share a host (host_id 7), which counted 2; rank 1 read it later.
  ranks[2].tcp_timeouts = 1;
  ranks[2].host_id = 7;
  ranks[3].tcp_timeouts = 2;
  ranks[3].host_id = 7;
  Comparison c = Compare({}, ranks, expected, 0.25);
  ASSERT_EQ(c.iterations.size(), 2u);
  EXPECT_EQ(c.iterations[0].tcp_timeouts, 0);
  EXPECT_EQ(c.iterations[1].tcp_timeouts, 2);
  std::ostringstream out;
  PrintComparison(out, c);
  EXPECT_NE(out.str().find("SLOW  RTO 2"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("which the model (no losses) does not predict"), std::string::npos);
  nlohmann::json j = ToJson(c);
  EXPECT_FALSE(j["iterations"][0].contains("tcp_timeouts"));
  EXPECT_EQ(j["iterations"][1].value("tcp_timeouts", 0), 2);
  EXPECT_EQ(ToJson(ComparisonFromJson(j)), j);
}

// An iteration in which a rank waited for a core a notable share of its step is marked CPU in
// the table and results.json: its time is genie's machine's as well as the network's.
TEST(PredictionTest, AnIterationWhoseRankWaitedForACoreIsMarkedCpu) {
  Expectation expected =
      ExpectationFromSimulation("model", 1'000'000, {AllReduce(0, 0, 0, 1'000'000)});
  std::vector<RankSummary> ranks = {
      {0, 0, 0, 1'000'000, 0, 0, 0},
      {0, 1, 2'000'000, 4'000'000, 0, 0, 0},
  };
  ranks[0].cpu_wait_ns = 1'000;      // 0.1 %: healthy
  ranks[1].cpu_wait_ns = 600'000;    // 30 % of its 2 ms step
  Comparison c = Compare({}, ranks, expected, 0.25);
  ASSERT_EQ(c.iterations.size(), 2u);
  EXPECT_EQ(c.iterations[0].cpu_wait_fraction, 0);
  EXPECT_NEAR(c.iterations[1].cpu_wait_fraction, 0.3, 1e-9);
  std::ostringstream out;
  PrintComparison(out, c);
  EXPECT_NE(out.str().find("SLOW  CPU 30 %"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("not evidence against the network"), std::string::npos);
  nlohmann::json j = ToJson(c);
  EXPECT_FALSE(j["iterations"][0].contains("cpu_wait_fraction"));
  EXPECT_NEAR(j["iterations"][1].value("cpu_wait_fraction", 0.0), 0.3, 1e-9);
  EXPECT_EQ(ToJson(ComparisonFromJson(j)), j);
}

TEST(PredictionTest, BaselineIsTheMedianOfAnEarlierRunsMeasuredSteps) {
  nlohmann::json old = {{"iterations",
                         {{{"iteration", -1}, {"step_time_ns", 9000}},
                          {{"iteration", 0}, {"step_time_ns", 1000}},
                          {{"iteration", 1}, {"step_time_ns", 3000}},
                          {{"iteration", 2}, {"step_time_ns", 2000}}}},
                        {"collective_types", {{{"type", "all_reduce"}, {"busbw_gbps", 0.5}}}}};
  auto e = ExpectationFromResults("old", old);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->step_ns, 2000);
  ASSERT_EQ(e->types.size(), 1u);
  EXPECT_DOUBLE_EQ(e->types[0].busbw_gbps, 0.5);
  EXPECT_FALSE(ExpectationFromResults("empty", nlohmann::json::object()).ok());
}

}  // namespace
}  // namespace genie::report
