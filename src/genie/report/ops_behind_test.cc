#include "genie/report/ops_behind.h"

#include <gtest/gtest.h>

#include "genie/report/prediction.h"

namespace genie::report {
namespace {

using record::OpEvent;

OpEvent Op(int rank, NodeId node, std::string name, TimeNs start, TimeNs end,
           OpKind kind = OpKind::kCollective) {
  OpEvent e;
  e.rank = rank;
  e.iteration = 3;
  e.node = node;
  e.name = std::move(name);
  e.kind = kind;
  e.coll_type = CollectiveType::kAllReduce;
  e.size = 1 << 20;
  e.group = 1;
  e.group_size = 2;
  e.start = start;
  e.end = end;
  return e;
}

// OpsBehind takes the run's ops by pointer.
std::vector<const OpEvent*> Ptrs(const std::vector<OpEvent>& ops) {
  std::vector<const OpEvent*> out;
  for (const auto& e : ops) out.push_back(&e);
  return out;
}

constexpr TimeNs kStart = 5'000'000;  // the measured iteration's first rank start (run clock)

TEST(OpsBehindTest, RanksTheOpsThatTookLongestBeyondTheirPrediction) {
  // The model: node 10 from 0 to 1 ms, node 11 from 1 to 2 ms, on both ranks.
  const std::vector<OpEvent> model = {
      Op(0, 10, "ar.a", 0, 1'000'000), Op(1, 10, "ar.a", 0, 1'000'000),
      Op(0, 11, "ar.b", 1'000'000, 2'000'000), Op(1, 11, "ar.b", 1'000'000, 2'000'000)};
  // The run: node 10 on time; node 11 took 4 ms on rank 1 (3 ms on rank 0, issued later).
  const std::vector<OpEvent> run = {
      Op(0, 10, "ar.a", kStart, kStart + 1'000'000), Op(1, 10, "ar.a", kStart, kStart + 1'100'000),
      Op(0, 11, "ar.b", kStart + 2'000'000, kStart + 5'000'000),
      Op(1, 11, "ar.b", kStart + 1'000'000, kStart + 5'000'000),
      Op(0, 12, "compute", kStart, kStart + 9'000'000, OpKind::kCompute)};
  const std::vector<OpBehind> behind = OpsBehind(Ptrs(run), kStart, model, 10);
  ASSERT_EQ(behind.size(), 2u);  // the compute op is not compared
  const OpBehind& b = behind[0];
  EXPECT_EQ(b.node, 11u);
  EXPECT_EQ(b.name, "ar.b");
  EXPECT_EQ(b.type, "all_reduce");
  EXPECT_EQ(b.group, 1);
  EXPECT_EQ(b.ranks, (std::vector<int>{0, 1}));
  // Its own time runs from rank 0's late issue (2 ms, 1 ms after the model's) to 5 ms: 3 ms
  // against 1, so it added 2 ms; the other 1 ms of its lateness was rank 0's, issued late.
  EXPECT_EQ(b.measured_ns(), 3'000'000);
  EXPECT_EQ(b.expected_ns(), 1'000'000);
  EXPECT_EQ(b.added_ns(), 2'000'000);
  EXPECT_DOUBLE_EQ(b.ratio(), 3.0);
  EXPECT_EQ(b.late_ns(), 3'000'000);  // ended at 5 ms against the model's 2 ms
  EXPECT_EQ(behind[1].node, 10u);
  EXPECT_EQ(behind[1].added_ns(), 100'000);
  EXPECT_EQ(behind[1].late_ns(), 100'000);
  // Kept: the most behind only.
  ASSERT_EQ(OpsBehind(Ptrs(run), kStart, model, 1).size(), 1u);
  EXPECT_EQ(OpsBehind(Ptrs(run), kStart, model, 1)[0].node, 11u);
}

// As the runtime matches them: by group and position among the rank's collectives of the
// group, whatever the node ids (rank 1's differ here); a collective of another group apart.
TEST(OpsBehindTest, ACollectivesRanksAreMatchedByPositionInTheirGroup) {
  auto in_group = [](OpEvent e, int64_t group) {
    e.group = group;
    return e;
  };
  const std::vector<OpEvent> model = {Op(0, 10, "a", 0, 1'000'000), Op(1, 110, "a", 0, 1'000'000),
                                      Op(0, 11, "b", 1'000'000, 2'000'000),
                                      Op(1, 111, "b", 1'000'000, 2'000'000),
                                      in_group(Op(0, 12, "c", 0, 1'000'000), 2)};
  const std::vector<OpEvent> run = {Op(1, 111, "b", kStart + 1'000'000, kStart + 6'000'000),
                                    Op(0, 11, "b", kStart + 1'000'000, kStart + 6'000'000),
                                    Op(1, 110, "a", kStart, kStart + 2'000'000),
                                    Op(0, 10, "a", kStart, kStart + 1'000'000),
                                    in_group(Op(0, 12, "c", kStart, kStart + 1'000'000), 2)};
  const std::vector<OpBehind> behind = OpsBehind(Ptrs(run), kStart, model, 10);
  ASSERT_EQ(behind.size(), 3u);
  EXPECT_EQ(behind[0].node, 11u);  // named as on rank 0, the lowest
  EXPECT_EQ(behind[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(behind[0].added_ns(), 4'000'000);
  EXPECT_EQ(behind[1].node, 10u);
  EXPECT_EQ(behind[1].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(behind[1].added_ns(), 1'000'000);
  EXPECT_EQ(behind[2].group, 2);
  EXPECT_EQ(behind[2].ranks, (std::vector<int>{0}));
}

TEST(OpsBehindTest, PointToPointOpsAreEachRanksOwn) {
  // Node 20 is a send on rank 0 and, in this trace, an unrelated recv on rank 1 (per-rank ids).
  const std::vector<OpEvent> model = {Op(0, 20, "send", 0, 2'000'000, OpKind::kSend),
                                      Op(1, 20, "recv", 0, 2'000'000, OpKind::kRecv)};
  const std::vector<OpEvent> run = {
      Op(0, 20, "send", kStart, kStart + 500'000, OpKind::kSend),  // left when buffered: sooner
      Op(1, 20, "recv", kStart, kStart + 3'000'000, OpKind::kRecv),
      Op(1, 21, "recv", kStart, kStart + 9'000'000, OpKind::kRecv)};  // not in the model
  const std::vector<OpBehind> behind = OpsBehind(Ptrs(run), kStart, model, 10);
  ASSERT_EQ(behind.size(), 2u);
  EXPECT_EQ(behind[0].type, "recv");
  EXPECT_EQ(behind[0].ranks, (std::vector<int>{1}));
  EXPECT_EQ(behind[0].added_ns(), 1'000'000);
  EXPECT_EQ(behind[1].type, "send");
  EXPECT_EQ(behind[1].late_ns(), -1'500'000);
}

TEST(OpsBehindTest, FurthestOverIterationsPrintedAndKeptInTheResults) {
  OpBehind a;
  a.iteration = 0;
  a.node = 7;
  a.name = "layer.3.grad_all_reduce";
  a.type = "all_reduce";
  a.size = 32 << 20;
  a.ranks = {0, 1, 2, 3, 6};
  a.measured_issue_ns = 500'000'000;
  a.measured_end_ns = 3'500'000'000;  // 3 s from its issue, ended 2.5 s late
  a.expected_issue_ns = 0;
  a.expected_end_ns = 1'000'000'000;
  OpBehind b = a;
  b.iteration = 1;
  b.measured_end_ns = 2'000'000'000;
  const std::vector<OpBehind> top = FurthestBehind({{b}, {a}}, 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].iteration, 0);
  const std::string text = FormatOpsBehind(top);
  EXPECT_NE(text.find("the ops furthest behind the model"), std::string::npos) << text;
  EXPECT_NE(text.find("0-3,6"), std::string::npos) << text;
  EXPECT_NE(text.find("3.00 "), std::string::npos) << text;    // the ratio
  EXPECT_NE(text.find("2.000 s"), std::string::npos) << text;  // added
  EXPECT_NE(text.find("2.500 s"), std::string::npos) << text;  // late
  EXPECT_NE(text.find("layer.3.grad_all_reduce"), std::string::npos) << text;
  EXPECT_EQ(FormatOpsBehind({}), "");
  EXPECT_EQ(ToJson(OpBehindFromJson(ToJson(a))), ToJson(a));

  // In a comparison: written per iteration, read back, and printed under the table.
  Comparison c;
  c.source = "model";
  IterationComparison it;
  it.iteration = 0;
  it.measured_ns = 4'000'000'000;
  it.expected_ns = 2'000'000'000;
  it.ratio = 2.0;
  it.behind = {a};
  c.iterations = {it};
  const nlohmann::json j = ToJson(c);
  ASSERT_EQ(j["iterations"][0]["ops_behind"].size(), 1u);
  EXPECT_EQ(j["iterations"][0]["ops_behind"][0]["node"], 7);
  EXPECT_EQ(ToJson(ComparisonFromJson(j)), j);
  std::ostringstream out;
  PrintComparison(out, ComparisonFromJson(j));
  EXPECT_NE(out.str().find("layer.3.grad_all_reduce"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace genie::report
