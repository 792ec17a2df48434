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

// On the grid: due 10 s after the connections opened, then every 10.2 s; the offset in the
// measured iteration scaled to the predicted one (here half as long).
TEST(ProbePlacement, OnTheGridAtTheSameShareOfTheStep) {
  const auto at = ProbeAt(Bbr(), Iteration(8200 * kMs), 2 * kS, 1 * kS);
  ASSERT_TRUE(at.has_value());
  EXPECT_DOUBLE_EQ(*at, 0.9e9);  // 1.8 s into the 2 s measured: 0.9 s into the 1 s predicted
  const auto second = ProbeAt(Bbr(), Iteration(19 * kS), 2 * kS, 2 * kS);
  ASSERT_TRUE(second.has_value());
  EXPECT_DOUBLE_EQ(*second, 1.2e9);  // 20.2 s
  // Between probes, or none configured: nothing.
  EXPECT_FALSE(ProbeAt(Bbr(), Iteration(12 * kS), 2 * kS, 2 * kS).has_value());
  EXPECT_FALSE(ProbeAt(config::NetworkConfig{}, Iteration(9 * kS), 2 * kS, 2 * kS).has_value());
}

// Recorded: each rank's probe where it was, scaled; a rank without one never probes.
TEST(ProbePlacement, RecordedProbesGoWhereTheyWere) {
  MeasuredIteration m = Iteration(8 * kS);
  m.probe_at_ns = {1800 * kMs, -1};
  const MeasuredIteration placed = WithRecordedProbes(Bbr(), m, 2 * kS, 1 * kS);
  ASSERT_EQ(placed.since_open_ns.size(), 2u);
  // Rank 0's connections opened 10 s before its probe, at 0.9 s of the prediction.
  EXPECT_EQ(placed.since_open_ns[0], 10 * kS - 900 * kMs);
  // Rank 1's open 20 intervals after its start: never within a step.
  EXPECT_EQ(placed.since_open_ns[1], kMs - 200 * kS + 10 * kS);
  // Nothing placed at all.
  const MeasuredIteration none = WithRecordedProbes(Bbr(), m, 0, 0);
  EXPECT_EQ(none.since_open_ns[0], -190 * kS);
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
