#include "genie/driver/probe_placement.h"

#include <gtest/gtest.h>

namespace genie::driver {
namespace {

constexpr TimeNs kS = kNsPerSec;
constexpr TimeNs kMs = kNsPerMs;

config::NetworkConfig Bbr() {
  config::NetworkConfig net;
  net.probe_rtt = {10e9, 200e6, 0.015};
  return net;
}

// Two ranks, the second starting 1 ms after the first.
MeasuredIteration Iteration(TimeNs age) {
  MeasuredIteration m;
  m.start_ns = {0, kMs};
  m.since_open_ns = {age, age + kMs};
  return m;
}

// On the grid: due 10 s after the connections opened, then every 10.2 s; placed at the share
// of the predicted step its offset is of the measured one (here half), for both ranks at
// once whatever their start skew, and lasting that share of its 200 ms.
TEST(ProbePlacement, OnTheGridAtTheSameShareOfTheStep) {
  const auto placed = WithProbesPlaced(Bbr(), Iteration(8200 * kMs), 2 * kS, 1 * kS, false);
  ASSERT_TRUE(placed.has_value());
  // Due at 0.9 s of the simulation: opened 10 s before, each from its own start.
  EXPECT_EQ(placed->since_open_ns, (std::vector<TimeNs>{9100 * kMs, 9101 * kMs}));
  EXPECT_DOUBLE_EQ(placed->probe_duration_scale, 0.5);
  // The second probe, 20.2 s after they opened.
  const auto second = WithProbesPlaced(Bbr(), Iteration(19 * kS), 2 * kS, 2 * kS, false);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->since_open_ns[0], 8800 * kMs);
  EXPECT_DOUBLE_EQ(second->probe_duration_scale, 1.0);
  // One under way as the iteration starts (10.0-10.2 s) stays where it is.
  const auto ongoing = WithProbesPlaced(Bbr(), Iteration(10100 * kMs), 2 * kS, 2 * kS, false);
  ASSERT_TRUE(ongoing.has_value());
  EXPECT_EQ(ongoing->since_open_ns[0], 10100 * kMs);
  // Between probes, or none configured: nothing.
  EXPECT_FALSE(WithProbesPlaced(Bbr(), Iteration(12 * kS), 2 * kS, 2 * kS, false).has_value());
  EXPECT_FALSE(
      WithProbesPlaced(config::NetworkConfig{}, Iteration(9 * kS), 2 * kS, 2 * kS, false));
}

// Recorded: each rank's probe where it was, scaled; a rank without one never probes; without
// probes at all, every rank's connections open 20 intervals after its start.
TEST(ProbePlacement, RecordedProbesGoWhereTheyWere) {
  MeasuredIteration m = Iteration(8 * kS);
  m.probe_at_ns = {1800 * kMs, -1};
  const auto placed = WithProbesPlaced(Bbr(), m, 2 * kS, 1 * kS, true);
  ASSERT_TRUE(placed.has_value());
  EXPECT_EQ(placed->since_open_ns[0], 10 * kS - 900 * kMs);
  EXPECT_EQ(placed->since_open_ns[1], kMs - 200 * kS);
  m.probe_at_ns = {-1, -1};
  EXPECT_FALSE(WithProbesPlaced(Bbr(), m, 2 * kS, 1 * kS, true).has_value());
  EXPECT_EQ(WithoutProbes(Bbr(), m).since_open_ns,
            (std::vector<TimeNs>{-200 * kS, kMs - 200 * kS}));
}

TEST(ProbePlacement, ConnectedBeforeFirstOpFromTheTrafficRecords) {
  const auto run_info = nlohmann::json::parse(R"({"traffic": [
      {"rank": 1, "startup": {"ready_to_first_op_ns": 113000000}},
      {"rank": 0, "startup": {}}, {"rank": 7, "startup": {"ready_to_first_op_ns": 5}}]})");
  EXPECT_EQ(ConnectedBeforeFirstOp(2, run_info), (std::vector<TimeNs>{0, 113 * kMs}));
  EXPECT_EQ(ConnectedBeforeFirstOp(2, nlohmann::json()), (std::vector<TimeNs>{0, 0}));
}

}  // namespace
}  // namespace genie::driver
