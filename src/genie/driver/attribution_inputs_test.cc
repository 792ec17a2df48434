// Attribution's counterfactual simulations on synthetic records: two ranks, each 1 ms of GPU
// compute then a 1 MiB all-reduce over a 1 GB/s switch. The "measured" ops are written by hand
// (a late rank, a slow all-reduce, a neighbour's predicted traffic, a healthy iteration), so
// each case knows its answer; the simulations are the flow model's.
#include "genie/driver/attribution_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "genie/trace/attributes.h"
#include "tests/support/switch_workload.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;
constexpr TimeNs kMs = 1'000'000;

class AttributionInputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ChakraProtoMsg::Node comp;
    comp.set_id(0);
    comp.set_name("compute");
    comp.set_type(ChakraProtoMsg::COMP_NODE);
    comp.set_duration_micros(1000);
    ChakraProtoMsg::Node ar;
    ar.set_id(1);
    ar.set_name("ar");
    ar.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    ar.add_data_deps(0);
    trace::AddInt64(&ar, "comm_type", 0);  // ALL_REDUCE
    trace::AddUint64(&ar, "comm_size", 1 << 20);
    ASSERT_NO_FATAL_FAILURE(
        ::genie::testing::PrepareOnSwitch(dir_.string(), 2, {comp, ar}, &setup_));
    measured_[0].start_ns = {0, 0};
    auto e0 = Simulate(setup_, *setup_.network, sim::NetworkModelKind::kFlow, nullptr,
                       SimulatedIterations(1), &measured_[0]);
    ASSERT_TRUE(e0.ok()) << e0.status().message();
    e0_ = e0->end_ns;
    ASSERT_GT(e0_, kMs);
  }

  // Iteration 0 measured: rank r's compute [0, compute[r]), its all-reduce from then to `end`.
  void Measure(const std::vector<TimeNs>& compute, TimeNs end) {
    ops_.clear();
    ranks_.clear();
    for (int r = 0; r < 2; ++r) {
      record::OpEvent c;
      c.rank = r;
      c.node = 0;
      c.kind = OpKind::kCompute;
      c.start = 0;
      c.end = compute[r];
      ops_.push_back(c);
      record::OpEvent a;
      a.rank = r;
      a.node = 1;
      a.name = "ar";
      a.kind = OpKind::kCollective;
      a.size = 1 << 20;
      a.group_size = 2;
      a.start = compute[r];
      a.end = end;
      ops_.push_back(a);
      ranks_.push_back({r, 0, 0, end});
    }
    compared_ = report::Comparison{};
    compared_.threshold = 0.25;
    report::IterationComparison it;
    it.iteration = 0;
    it.measured_ns = end;
    it.expected_ns = e0_;
    compared_.iterations = {it};
  }

  std::vector<report::IterationAttribution> Attribute(
      const std::map<int, report::Contention>& contention = {},
      const nlohmann::json& run_info = nlohmann::json()) {
    const AttributionRun run{setup_, *setup_.network, sim::NetworkModelKind::kFlow, measured_,
                             ops_,   ranks_};
    return AttributeSlowIterations(run, compared_, std::nullopt, run_info, contention);
  }

  TempDir tmp_{"attribution-inputs"};
  std::filesystem::path dir_ = tmp_.path();
  runtime::RunSetup setup_;
  std::map<int, MeasuredIteration> measured_;
  TimeNs e0_ = 0;
  std::vector<record::OpEvent> ops_;
  std::vector<record::RankSummary> ranks_;
  report::Comparison compared_;
};

TEST_F(AttributionInputsTest, ALateRankIsTheStragglerByItsMeasuredCompute) {
  // Rank 1 computed 3 ms instead of 1: the step is 2 ms late, all of it its compute.
  Measure({1 * kMs, 3 * kMs}, e0_ + 2 * kMs);
  const auto a = Attribute();
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].causes.size(), 1u);
  const report::CauseShare& c = a[0].causes[0];
  EXPECT_EQ(c.cause, report::Cause::kStraggler);
  EXPECT_EQ(c.culprit, "rank 1");
  EXPECT_EQ(c.ranks[0].trace_ns, 1 * kMs);
  EXPECT_EQ(c.ranks[0].measured_ns, 3 * kMs);
  EXPECT_NEAR(static_cast<double>(a[0].compute_ns), 2e6, 2e4);  // Ec - E0
  ASSERT_TRUE(c.wait.has_value());
  EXPECT_EQ(c.wait->waiting, std::vector<int>{0});
  EXPECT_EQ(c.wait->wait_ns, 2 * kMs);
}

TEST_F(AttributionInputsTest, ASlowAllReduceIsTheNetworksNotAStragglers) {
  Measure({1 * kMs, 1 * kMs}, e0_ + 4 * kMs);
  const auto a = Attribute();
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].causes.size(), 1u);
  EXPECT_EQ(a[0].causes[0].cause, report::Cause::kNetwork);
  EXPECT_NE(a[0].causes[0].culprit.find("all_reduce node 1 on ranks 0-1"), std::string::npos)
      << a[0].causes[0].culprit;
  EXPECT_EQ(a[0].compute_ns, 0);
  EXPECT_EQ(a[0].network_ns, 4 * kMs);
}

// A host whose TCP retransmitted more than the doctor's loss threshold is the network's
// evidence, with its retransmission timeouts: each a stall of 200 ms or more, how a shallow
// queue's losses reach the step. A host under the threshold is not named.
TEST_F(AttributionInputsTest, RetransmissionsAndTheirTimeoutsAreTheNetworksEvidence) {
  Measure({1 * kMs, 1 * kMs}, e0_ + 4 * kMs);
  const nlohmann::json run_info = {
      {"testbed",
       {{"counters",
         {{"hosts",
           {{{"host", "h0"},
             {"tcp_out_segs", 10000},
             {"tcp_retrans_segs", 150},
             {"tcp_timeouts", 3}},
            {{"host", "h1"}, {"tcp_out_segs", 10000}, {"tcp_retrans_segs", 1}}}}}}}}};
  const auto a = Attribute({}, run_info);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].causes.size(), 1u);
  const report::CauseShare& c = a[0].causes[0];
  EXPECT_EQ(c.cause, report::Cause::kNetwork);
  std::string evidence;
  for (const std::string& e : c.evidence) evidence += e + "\n";
  EXPECT_NE(evidence.find("h0: 150 of its 10000 TCP segments sent again during the run (1.50 %), "
                          "3 retransmission timeout(s)"),
            std::string::npos)
      << evidence;
  EXPECT_EQ(evidence.find("h1:"), std::string::npos) << evidence;
}

TEST_F(AttributionInputsTest, ANeighboursPredictedTrafficIsContentionAgainstTheJobAlone) {
  // The prediction with the neighbour says e0 + 3 ms; alone e0. Measured as predicted together.
  Measure({1 * kMs, 1 * kMs}, e0_ + 3 * kMs);
  compared_.iterations[0].expected_ns = e0_ + 3 * kMs;
  nlohmann::json prediction = report::ToJson(compared_);
  prediction["alone"] = {{"step_ns", e0_},
                         {"neighbours", {{{"job", "bulk"}, {"links", {"h0-s0", "s0-h1"}}}}}};
  const auto contention = ContentionFromPrediction(prediction);
  ASSERT_EQ(contention.size(), 1u);
  EXPECT_EQ(contention.at(0).together_ns, e0_ + 3 * kMs);
  EXPECT_EQ(contention.at(0).alone_ns, e0_);
  const auto a = Attribute(contention);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(a[0].causes.size(), 1u) << report::FormatAttribution(a);
  EXPECT_EQ(a[0].causes[0].cause, report::Cause::kContention);
  EXPECT_EQ(a[0].causes[0].culprit, "job bulk");
  EXPECT_EQ(a[0].contention_ns, 3 * kMs);
  EXPECT_TRUE(ContentionFromPrediction(report::ToJson(compared_)).empty());
  // As the jobs prediction records it: the alone step beside each iteration's, the names apart.
  nlohmann::json jobs = report::ToJson(compared_);
  jobs["iterations"][0]["expected_alone_step_ns"] = e0_;
  jobs["neighbours"] = {{"job", "a"}, {"jobs", {"b", "bulk"}}};
  const auto from_jobs = ContentionFromPrediction(jobs);
  ASSERT_EQ(from_jobs.size(), 1u);
  EXPECT_EQ(from_jobs.at(0).alone_ns, e0_);
  EXPECT_EQ(from_jobs.at(0).together_ns, e0_ + 3 * kMs);
  const auto b = Attribute(from_jobs);
  ASSERT_EQ(b.size(), 1u);
  ASSERT_EQ(b[0].causes.size(), 1u);
  EXPECT_EQ(b[0].causes[0].culprit, "job b, job bulk");
}

TEST_F(AttributionInputsTest, AHealthyIterationIsNotAttributed) {
  Measure({1 * kMs, 1 * kMs}, e0_ + e0_ / 20);
  EXPECT_TRUE(Attribute().empty());
}

// An iteration with a straggler (compute beyond the trace, or a first op begun late, by more
// than the floor of the healthy step) is found from the measurement; one within it is not.
TEST_F(AttributionInputsTest, AStragglersIterationIsFoundByItsComputeOrItsLateStart) {
  auto healthy = record::Recorder::Create("", nlohmann::json::object());
  ASSERT_TRUE(healthy.ok());
  ASSERT_TRUE(Simulate(setup_, *setup_.network, sim::NetworkModelKind::kFlow, healthy->get(),
                       SimulatedIterations(1), &measured_[0])
                  .ok());
  auto straggled = [&] {
    return StraggledIterations(2, ops_, ranks_, **healthy, e0_);
  };
  const TimeNs floor = static_cast<TimeNs>(report::kAttributionFloor * static_cast<double>(e0_));
  Measure({1 * kMs, 1 * kMs}, e0_);
  EXPECT_TRUE(straggled().empty());
  Measure({1 * kMs, 1 * kMs + floor / 2}, e0_ + floor / 2);
  EXPECT_TRUE(straggled().empty());
  Measure({1 * kMs, 1 * kMs + 2 * floor}, e0_ + 2 * floor);
  EXPECT_EQ(straggled(), std::set<int>{0});
  // Rank 0's compute as the trace's, begun 2 x floor after its iteration began (a stall).
  Measure({1 * kMs, 1 * kMs}, e0_ + 2 * floor);
  ops_[0].start += 2 * floor;
  ops_[0].end += 2 * floor;
  ops_[1].start += 2 * floor;
  EXPECT_EQ(straggled(), std::set<int>{0});
  // Both ranks late alike (a busy machine's sleeps): no straggler, however late.
  Measure({1 * kMs + 2 * floor, 1 * kMs + 2 * floor}, e0_ + 2 * floor);
  EXPECT_TRUE(straggled().empty());
}

TEST_F(AttributionInputsTest, TheWhatIfAppliesTheScheduledComputeFaults) {
  EXPECT_TRUE(
      WhatIfSteps({setup_, *setup_.network, sim::NetworkModelKind::kFlow, measured_, ops_, ranks_})
          .empty());
  auto schedule = compute::ParseComputeFaults("faults:\n  - {rank: 1, compute: 3x}\n", "f.yml");
  ASSERT_TRUE(schedule.ok());
  setup_.exec.compute_faults = std::make_shared<compute::ComputeFaultSchedule>(*schedule);
  const auto what_if =
      WhatIfSteps({setup_, *setup_.network, sim::NetworkModelKind::kFlow, measured_, ops_, ranks_});
  ASSERT_EQ(what_if.size(), 1u);
  EXPECT_NEAR(static_cast<double>(what_if.at(0) - e0_), 2e6, 2e4);
}

}  // namespace
}  // namespace genie::driver
