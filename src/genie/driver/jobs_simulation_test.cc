// Several jobs on one simulated network: two jobs on the same hosts share the hosts' links
// max-min (each gets half while both send), jobs on disjoint hosts of a star do not meet, and
// a traffic job slows a job only while its flows run.
// The workload: 2 ranks, one all-reduce of 64 MiB: each rank sends 64 MiB to the other in all
// (32 MiB reduce-scattered, 32 MiB gathered), 62.5 ms at 1 GB/s (2^30 B/s) with goodput 1.
#include "genie/driver/jobs_simulation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "genie/trace/attributes.h"
#include "tests/support/switch_workload.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;
using ::genie::testing::WriteEveryRank;

constexpr Bytes kBytes = 64 << 20;
constexpr double kBytesPerNs = 1.0 * (1 << 30) / 1e9;
const double kSendNs = static_cast<double>(kBytes) / kBytesPerNs;  // 62.5 ms

class JobsSimulationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ChakraProtoMsg::Node node;
    node.set_id(1);
    node.set_name("ar");
    node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
    trace::AddInt64(&node, "comm_type", 0);  // ALL_REDUCE
    trace::AddUint64(&node, "comm_size", kBytes);
    ASSERT_NO_FATAL_FAILURE(WriteEveryRank((dir_ / "ar").string(), 2, {node}));
    runtime::SetupFlags flags;
    flags.workload = (dir_ / "ar").string();
    auto setup = runtime::PrepareRun(flags);
    ASSERT_TRUE(setup.ok()) << setup.status().message();
    setup_ = std::move(*setup);
    hosts_.topology = {config::TopologyKind::kSwitch};
    hosts_.npus_count = {4};
    hosts_.bandwidth_gbps = {1.0};
    hosts_.latency_ns = {1000};
    hosts_.goodput = {1.0};
    hosts_.message_overhead_ns = {0};
  }

  SimJob Job(const std::string& name, std::vector<int> hosts, TimeNs start = 0) const {
    SimJob j;
    j.name = name;
    j.setup = &setup_;
    j.rank_host = std::move(hosts);
    j.start_ns = start;
    return j;
  }

  // Each job's step (one iteration).
  std::vector<TimeNs> Steps(const std::vector<SimJob>& jobs) const {
    auto sim = SimulateJobs(jobs, hosts_, sim::NetworkModelKind::kFlow);
    EXPECT_TRUE(sim.ok()) << sim.status().message();
    std::vector<TimeNs> steps;
    if (!sim.ok()) return steps;
    for (const auto& j : sim->jobs) {
      steps.push_back(j.step_ns.empty() ? 0 : j.step_ns.front());
    }
    return steps;
  }

  TempDir tmp_{"jobs_simulation"};
  std::filesystem::path dir_ = tmp_.path();
  runtime::RunSetup setup_;
  config::NetworkConfig hosts_;
};

TEST_F(JobsSimulationTest, AloneAJobTakesItsBytesAtTheLinksRate) {
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  EXPECT_NEAR(static_cast<double>(alone), kSendNs, 0.01 * kSendNs);
}

TEST_F(JobsSimulationTest, TwoJobsOnTheSameHostsShareTheirLinksHalfEach) {
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  const std::vector<TimeNs> together = Steps({Job("a", {0, 1}), Job("b", {0, 1})});
  ASSERT_EQ(together.size(), 2u);
  // Both send all the time: each gets half of every link, so each takes its bytes twice over.
  EXPECT_NEAR(static_cast<double>(together[0] - alone), kSendNs, 0.01 * kSendNs);
  EXPECT_NEAR(static_cast<double>(together[1] - alone), kSendNs, 0.01 * kSendNs);
}

// A leaf-spine hashing ports (ECMP l4): each job's connections on the spines its ranks'
// connections took, put on the NPUs its ranks took (job b's are slot 1 of the same hosts).
// Hosts 0 and 2 are on different leaves; each spine link carries half a host link. Both jobs
// pinned to spine 0 share it: a quarter each, 4 x the bytes' time; on spines 0 and 1, half
// each (the hosts' links then full), 2 x, as the split expects.
TEST_F(JobsSimulationTest, EachJobsConnectionsTakeTheirKnownSpines) {
  config::NetworkConfig hosts = hosts_;
  hosts.topology = {config::TopologyKind::kSwitch, config::TopologyKind::kSwitch};
  hosts.npus_count = {2, 2};
  hosts.bandwidth_gbps = {1.0, 1.0};
  hosts.latency_ns = {1000, 1000};
  hosts.leaf_spine.spines = 2;
  hosts.leaf_spine.bandwidth_gbps = 0.5;
  hosts_ = hosts;
  auto pinned = [&](const std::string& name, int spine) {
    SimJob j = Job(name, {0, 2});
    j.connection_spines = {{0, 1, 0, spine}, {1, 0, 0, spine}};
    return j;
  };
  const std::vector<TimeNs> same = Steps({pinned("a", 0), pinned("b", 0)});
  const std::vector<TimeNs> apart = Steps({pinned("a", 0), pinned("b", 1)});
  const std::vector<TimeNs> split = Steps({Job("a", {0, 2}), Job("b", {0, 2})});
  ASSERT_EQ(same.size(), 2u);
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_EQ(split.size(), 2u);
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(static_cast<double>(same[j]), 4 * kSendNs, 0.02 * kSendNs) << j;
    EXPECT_NEAR(static_cast<double>(apart[j]), 2 * kSendNs, 0.02 * kSendNs) << j;
    EXPECT_NEAR(static_cast<double>(split[j]), 2 * kSendNs, 0.02 * kSendNs) << j;
  }
}

TEST_F(JobsSimulationTest, JobsOnDisjointHostsOfAStarDoNotInterfere) {
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  const std::vector<TimeNs> together = Steps({Job("a", {0, 1}), Job("b", {2, 3})});
  EXPECT_EQ(together[0], alone);
  EXPECT_EQ(together[1], alone);
}

TEST_F(JobsSimulationTest, AJobStartingLaterMeetsOnlyTheRestOfTheFirst) {
  // b starts when a is half done: they share a's second half, which then takes twice as long;
  // b's first half runs at half speed beside it, then alone.
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  const auto half = static_cast<TimeNs>(kSendNs / 2);
  const std::vector<TimeNs> together = Steps({Job("a", {0, 1}), Job("b", {0, 1}, half)});
  EXPECT_NEAR(static_cast<double>(together[0] - alone), kSendNs / 2, 0.02 * kSendNs);
  EXPECT_NEAR(static_cast<double>(together[1] - alone), kSendNs / 2, 0.02 * kSendNs);
}

TEST_F(JobsSimulationTest, ATrafficJobSlowsAJobOnlyDuringItsWindow) {
  SimJob traffic;
  traffic.name = "bulk";
  TrafficFlow f;
  f.src_host = 0;
  f.dst_host = 1;
  f.duration_ns = 30'000'000;  // 30 ms from the start: rank 0 -> 1 at half speed meanwhile
  traffic.traffic = {f};
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  const std::vector<TimeNs> with = Steps({Job("a", {0, 1}), traffic});
  // Rank 0's bytes go at half speed for 30 ms: 15 ms later. (Rank 1's, the other way, do not
  // meet the traffic, but each step waits for both.)
  EXPECT_NEAR(static_cast<double>(with[0] - alone), 15e6, 1e6);
  // The same flow long after the job ended changes nothing.
  traffic.start_ns = 200'000'000;
  EXPECT_EQ(Steps({Job("a", {0, 1}), traffic})[0], alone);
  // Nor does one between two other hosts.
  traffic.start_ns = 0;
  traffic.traffic[0].src_host = 2;
  traffic.traffic[0].dst_host = 3;
  EXPECT_EQ(Steps({Job("a", {0, 1}), traffic})[0], alone);
}

TEST_F(JobsSimulationTest, AJobSendingInTheOthersGapBetweenIterationsIsNotSlowed) {
  // Two iterations each, 100 ms apart (IterationPolicy::gap_ns): b's first iteration falls in
  // a's gap, a's second in b's; interleaved on the same hosts, neither waits for the other.
  auto with_gap = [&](SimJob j) {
    j.iterations.iterations = 2;
    j.iterations.gap_ns = 100'000'000;
    return j;
  };
  auto sim = SimulateJobs({with_gap(Job("a", {0, 1})), with_gap(Job("b", {0, 1}, 70'000'000))},
                          hosts_, sim::NetworkModelKind::kFlow);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const TimeNs alone = Steps({Job("a", {0, 1})})[0];
  for (const auto& j : sim->jobs) {
    ASSERT_EQ(j.step_ns.size(), 2u);
    for (TimeNs step : j.step_ns) EXPECT_NEAR(static_cast<double>(step), alone, 1e5) << j.name;
  }
  // Without the gap b meets a's first iteration's end and its second.
  auto packed = SimulateJobs({Job("a", {0, 1}), Job("b", {0, 1}, 30'000'000)}, hosts_,
                             sim::NetworkModelKind::kFlow);
  ASSERT_TRUE(packed.ok());
  EXPECT_GT(packed->jobs[1].step_ns[0], alone + 10'000'000);
}

TEST_F(JobsSimulationTest, ARankOnAHostTheNetworkLacksIsAnErrorNamingTheJob) {
  auto sim = SimulateJobs({Job("a", {0, 7})}, hosts_, sim::NetworkModelKind::kFlow);
  ASSERT_FALSE(sim.ok());
  EXPECT_NE(sim.status().message().find("job a: rank 1 is on host 7"), std::string::npos)
      << sim.status().message();
}

}  // namespace
}  // namespace genie::driver
