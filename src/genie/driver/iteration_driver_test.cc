// The iteration policy on the simulated backend: exact, so every figure can be asserted.
#include "genie/driver/iteration_driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "genie/collective/schedule_checker.h"
#include "genie/driver/simulation.h"
#include "genie/report/statistics.h"
#include "genie/workload/generator.h"
#include "tests/support/temp_dir.h"

namespace genie::driver {
namespace {

using ::genie::testing::TempDir;

class IterationDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    workload::GenCollectiveOptions gen;
    gen.ranks = 4;
    gen.size = 1 << 20;
    gen.output = (dir_ / "ar").string();
    ASSERT_TRUE(workload::GenerateCollective(gen).ok());
    std::ofstream(dir_ / "ring.yml") << "topology: [ Ring ]\nnpus_count: [ 4 ]\n"
                                        "bandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n";
    runtime::SetupFlags flags;
    flags.workload = gen.output;
    flags.network_path = (dir_ / "ring.yml").string();
    auto setup = runtime::PrepareRun(flags);
    ASSERT_TRUE(setup.ok()) << setup.status().message();
    setup_ = std::move(*setup);
  }

  SimulationStats Run(const IterationPolicy& policy) {
    auto stats = Simulate(setup_, *setup_.network, sim::NetworkModelKind::kCongestionUnaware,
                          nullptr, policy);
    EXPECT_TRUE(stats.ok()) << stats.status().message();
    return stats.ok() ? *stats : SimulationStats{};
  }

  TempDir tmp_{"iteration-driver"};
  std::filesystem::path dir_ = tmp_.path();
  runtime::RunSetup setup_;
};

TEST_F(IterationDriverTest, OneSimulatedIterationStartsAtZeroWithoutBarriers) {
  SimulationStats one = Run(SimulatedIterations());
  ASSERT_EQ(one.ranks.size(), 4u);
  for (const auto& s : one.ranks) {
    EXPECT_EQ(s.iteration, 0);
    EXPECT_EQ(s.start, 0);
    EXPECT_GT(s.finish, 0);
  }
}

TEST_F(IterationDriverTest, IterationsAreSeparatedByBarriersAndEachTakesTheSameTime) {
  const TimeNs single = Run(SimulatedIterations()).end_ns;
  SimulationStats many = Run(SimulatedIterations(/*iterations=*/3, /*warmup=*/1));
  ASSERT_EQ(many.ranks.size(), 16u);  // 4 ranks x (1 warm-up + 3 measured)
  std::map<int, TimeNs> last_finish;  // iteration -> latest finish over ranks
  for (const auto& s : many.ranks) {
    // The simulated network is deterministic and idle at each iteration's start.
    EXPECT_EQ(s.finish - s.start, single) << "rank " << s.rank << " iteration " << s.iteration;
    last_finish[s.iteration] = std::max(last_finish[s.iteration], s.finish);
  }
  for (const auto& s : many.ranks) {
    if (s.iteration == -1) continue;
    // The barrier: nobody starts iteration k before everybody finished k-1, and it costs time.
    EXPECT_GT(s.start, last_finish.at(s.iteration - 1));
  }
  for (const auto& t : report::TotalsPerRank(many.ranks)) {
    EXPECT_EQ(t.iterations, 3);
    EXPECT_EQ(t.elapsed_ns, 3 * single);  // barriers and warm-ups left out
    EXPECT_GT(t.span(), t.elapsed_ns);
  }
}

// The real ranks' barrier: every send meets its receive and nothing deadlocks (checked
// symbolically for every rank), the token goes to the ring neighbour and the release down the
// tree from rank 0 (every rank of a job up to kReleaseFanOut + 1 released by rank 0 itself),
// 2N - 1 messages; no rank of 8 talks to every other (a full mesh of connections).
TEST(TokenRingBarrier, IsAValidScheduleOverRingAndReleaseTree) {
  constexpr int kF = IterationDriver::kReleaseFanOut;
  for (int n : {1, 2, 3, 7, 17, 18, 64, 300}) {
    collective::CollectiveSpec spec = IterationDriver::BarrierSpec(n);
    std::vector<collective::Schedule> all;
    size_t messages = 0;
    for (int r = 0; r < n; ++r) {
      all.push_back(IterationDriver::TokenRingBarrier(n, r));
      for (const auto& step : all.back().steps) {
        if (collective::HasSend(step.kind)) {
          ++messages;
          const int to = step.send_peer;
          const bool ring = to == (r + 1) % n && step.send_tag == 0;
          const bool tree = to > 0 && (to - 1) / kF == r && step.send_tag == 1;
          EXPECT_TRUE(ring || tree) << "n " << n << " rank " << r << " to " << to;
        }
        if (collective::HasRecv(step.kind)) {
          const int from = step.recv_peer;
          const bool ring = from == (r + n - 1) % n && step.recv_tag == 0;
          const bool tree = r > 0 && from == (r - 1) / kF && step.recv_tag == 1;
          EXPECT_TRUE(ring || tree) << "n " << n << " rank " << r << " from " << from;
        }
      }
    }
    Status st = collective::CheckSchedules(spec, all);
    EXPECT_TRUE(st.ok()) << "n " << n << ": " << st.ToString();
    EXPECT_EQ(messages, n > 1 ? 2u * static_cast<size_t>(n) - 1 : 0u) << n;
  }
  for (int r = 0; r < 8; ++r) {
    std::set<int> peers;
    for (const auto& step : IterationDriver::TokenRingBarrier(8, r).steps) {
      if (collective::HasSend(step.kind)) peers.insert(step.send_peer);
      if (collective::HasRecv(step.kind)) peers.insert(step.recv_peer);
    }
    EXPECT_LT(peers.size(), 7u) << "rank " << r;
  }
  // Up to kF + 1 ranks, rank 0 releases every other rank itself.
  size_t released = 0;
  for (const auto& step : IterationDriver::TokenRingBarrier(kF + 1, 0).steps) {
    released += collective::HasSend(step.kind) && step.send_tag == 1;
  }
  EXPECT_EQ(released, static_cast<size_t>(kF));
}

}  // namespace
}  // namespace genie::driver
