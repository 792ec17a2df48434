#include "genie/compute/compute_fault.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "genie/compute/faulted_compute.h"

namespace genie::compute {
namespace {

ComputeFaultSchedule Parse(const std::string& text) {
  auto s = ParseComputeFaults(text, "f.yml");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : ComputeFaultSchedule{};
}

std::string Error(const std::string& text) {
  auto s = ParseComputeFaults(text, "f.yml");
  EXPECT_FALSE(s.ok()) << text;
  return s.ok() ? "" : s.status().message();
}

TEST(ComputeFaults, ParsesEveryKindBesideNetworkFaults) {
  auto s = Parse(R"(
faults:
  - {link: h3, rate: 100mbit}
  - {iteration: 5, rank: 3, compute: 1.5x, iterations: 2}
  - {rank: [2, 0, 2], stall: 2s, every: 3}
  - {rank: all, jitter: 10%}
  - {rank: 1, jitter: {sd: 5%, distribution: lognormal, seed: 7}}
  - {rank: 0, iteration: 3, ramp: {from: 1.0x, to: 2.0x, over: 5}}
  - {link: h1, delay: 5ms, jitter: 1ms}
)");
  EXPECT_EQ(s.network_faults, 2);
  ASSERT_EQ(s.faults.size(), 5u);
  const ComputeFault& slow = s.faults[0];
  EXPECT_EQ(slow.kind, ComputeFaultKind::kSlow);
  EXPECT_EQ(slow.entry, 2);
  EXPECT_EQ(slow.ranks, std::vector<int>{3});
  EXPECT_DOUBLE_EQ(slow.factor, 1.5);
  EXPECT_EQ(slow.iteration, 5);
  EXPECT_EQ(slow.iterations, 2);
  EXPECT_EQ(slow.Describe(), "rank 3: compute 1.5x from iteration 5 for 2 iterations");
  const ComputeFault& stall = s.faults[1];
  EXPECT_EQ(stall.ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(stall.stall, 2 * kNsPerSec);
  EXPECT_EQ(stall.every, 3);
  EXPECT_EQ(stall.iteration, 1);
  EXPECT_EQ(stall.Describe(), "ranks 0,2: stall 2.000 s every 3 iterations from iteration 1");
  const ComputeFault& all = s.faults[2];
  EXPECT_TRUE(all.ranks.empty());
  EXPECT_DOUBLE_EQ(all.sd, 0.1);
  EXPECT_EQ(all.distribution, JitterDistribution::kNormal);
  EXPECT_EQ(all.Describe(), "every rank: jitter sd 10% normal seed 1 from iteration 1");
  EXPECT_EQ(s.faults[3].distribution, JitterDistribution::kLognormal);
  EXPECT_EQ(s.faults[3].seed, 7u);
  EXPECT_DOUBLE_EQ(s.faults[3].sd, 0.05);
  const ComputeFault& ramp = s.faults[4];
  EXPECT_DOUBLE_EQ(ramp.from, 1.0);
  EXPECT_DOUBLE_EQ(ramp.to, 2.0);
  EXPECT_EQ(ramp.over, 5);
  EXPECT_EQ(ramp.Describe(), "rank 0: ramp 1x to 2x over 5 iterations from iteration 3");
  EXPECT_EQ(Parse("faults:\n  - {rank: 1, stall: 500ms, iteration: 4}\n").faults[0].Describe(),
            "rank 1: stall 500.000 ms at iteration 4");
}

TEST(ComputeFaults, BadInputNamesTheFileTheEntryAndWhatToWrite) {
  struct Case {
    const char* entry;
    const char* says;
  };
  const Case kCases[] = {
      {"{rank: 1, compute: 0x}", "a factor must be above 0"},
      {"{rank: 1, compute: -2}", "a factor must be above 0"},
      {"{rank: 1, compute: 150%}", "is not a factor; write e.g. 1.5x"},
      {"{rank: 1, ramp: {from: 1x, to: 0x, over: 3}}", "ramp: to: 0x: a factor must be above 0"},
      {"{rank: 1, ramp: {to: 2x}}", "over: 5"},
      {"{rank: 1, jitter: 100%}", "under 100 %"},
      {"{rank: 1, jitter: {sd: 150%}}", "under 100 %"},
      {"{rank: 1, jitter: {sd: 5%, distribution: gamma}}", "use normal, uniform or lognormal"},
      {"{rank: 1, jitter: {distribution: normal}}", "say its sd"},
      {"{rank: 1, compute: 2x, colour: red}", "unknown key 'colour'"},
      {"{rank: 1, compute: 2x, direction: out}", "'direction' is a network fault's key"},
      {"{rank: 1, compute: 2x, for: 2s}", "timed in iterations"},
      {"{rank: 1, compute: 2x, at: 1s}", "timed in iterations"},
      {"{rank: 1, link: h3, compute: 2x}", "both link and rank"},
      {"{compute: 2x}", "which rank (a compute fault: rank: 3"},
      {"{rank: 1, compute: 2x, every: 2}", "only a stall repeats"},
      {"{rank: 1, compute: 2x, stall: 1s}", "exactly one of"},
      {"{rank: 1}", "exactly one of"},
      {"{rank: -1, compute: 2x}", "rank: -1 is below 0"},
      {"{rank: 1, compute: 2x, iteration: 0}", "iteration (measured iterations count from 1): 0"},
      {"{rank: 1, stall: 0s}", "stall: must be in"},
  };
  for (const Case& c : kCases) {
    const std::string message =
        Error(std::string("faults:\n  - {link: h0, loss: 1%}\n  - ") + c.entry + "\n");
    EXPECT_NE(message.find("f.yml: fault 2: "), std::string::npos) << c.entry << ": " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.entry << ": " << message;
  }
  EXPECT_NE(Error("faults: 3\n").find("expected `faults:`"), std::string::npos);
}

TEST(ComputeFaults, RanksTheJobLacksAreRefused) {
  auto s = Parse("faults:\n  - {rank: [1, 7], compute: 2x}\n");
  EXPECT_TRUE(CheckRanks(s, 8).ok());
  Status st = CheckRanks(s, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("f.yml: fault 1 (ranks 1,7: compute 2x from iteration 1): the job "
                              "has no rank 7 (its ranks are 0..3)"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(CheckRanks(Parse("faults:\n  - {rank: all, compute: 2x}\n"), 1).ok());
}

ComputeFault Jitter(JitterDistribution d, double sd, uint64_t seed) {
  ComputeFault f;
  f.kind = ComputeFaultKind::kJitter;
  f.sd = sd;
  f.distribution = d;
  f.seed = seed;
  return f;
}

// The draw is a function of (seed, rank, node, iteration): asked in any order, any number of
// times, it is the same; changing any one of them changes it.
TEST(ComputeFaults, JitterDrawsDependOnTheirKeyAloneNotOnCallOrder) {
  const ComputeFault f = Jitter(JitterDistribution::kNormal, 0.1, 7);
  std::vector<double> forward, backward(200);
  for (int i = 0; i < 200; ++i) forward.push_back(JitterFactor(f, i % 4, 1000 + i, 1 + i / 50));
  for (int i = 199; i >= 0; --i) backward[i] = JitterFactor(f, i % 4, 1000 + i, 1 + i / 50);
  EXPECT_EQ(forward, backward);
  const double x = JitterFactor(f, 3, 42, 5);
  EXPECT_NE(x, JitterFactor(Jitter(JitterDistribution::kNormal, 0.1, 8), 3, 42, 5));
  EXPECT_NE(x, JitterFactor(f, 2, 42, 5));
  EXPECT_NE(x, JitterFactor(f, 3, 43, 5));
  EXPECT_NE(x, JitterFactor(f, 3, 42, 6));
  // The FaultedCompute of two ranks' executors (or a run and its prediction) agree draw by draw.
  ComputeFaultSchedule s;
  s.faults.push_back(f);
  FaultedCompute a(s, 3), b(s, 3);
  std::vector<TimeNs> by_a, by_b(50);
  for (NodeId n = 0; n < 50; ++n) by_a.push_back(a.Apply(1'000'000, 5, n));
  for (NodeId n = 50; n-- > 0;) by_b[n] = b.Apply(1'000'000, 5, n);
  EXPECT_EQ(by_a, by_b);
  EXPECT_NE(by_a[0], by_a[1]);
}

TEST(ComputeFaults, JitterHasMeanOneAndTheAskedSpread) {
  for (auto d : {JitterDistribution::kNormal, JitterDistribution::kUniform,
                 JitterDistribution::kLognormal}) {
    const ComputeFault f = Jitter(d, 0.2, 11);
    double sum = 0, sq = 0, lo = 10, hi = 0;
    const int n = 20000;
    for (int i = 0; i < n; ++i) {
      const double x = JitterFactor(f, i % 8, static_cast<NodeId>(i), 1 + i % 3);
      sum += x;
      sq += x * x;
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
    const double mean = sum / n;
    const double sd = std::sqrt(sq / n - mean * mean);
    EXPECT_NEAR(mean, 1.0, 0.01) << DistributionName(d);
    EXPECT_NEAR(sd, 0.2, 0.01) << DistributionName(d);
    EXPECT_GE(lo, 0.0);
    if (d == JitterDistribution::kNormal) {
      EXPECT_GE(lo, 1 - 3 * 0.2 - 1e-9);  // clipped at 3 sd
      EXPECT_LE(hi, 1 + 3 * 0.2 + 1e-9);
    }
    if (d == JitterDistribution::kUniform) {
      EXPECT_GE(lo, 1 - 0.2 * std::sqrt(3.0) - 1e-9);
      EXPECT_LE(hi, 1 + 0.2 * std::sqrt(3.0) + 1e-9);
    }
  }
}

TEST(FaultedCompute, FactorsHoldFromTheirIterationForTheirLengthAndMultiply) {
  auto s = Parse(R"(
faults:
  - {rank: 3, iteration: 2, iterations: 2, compute: 1.5x}
  - {rank: [1, 3], iteration: 3, ramp: {from: 1x, to: 2x, over: 4}}
  - {rank: 0, iteration: 2, stall: 1s}
  - {rank: 0, iteration: 3, stall: 200ms, every: 2, iterations: 4}
)");
  FaultedCompute r3(s, 3), r1(s, 1), r0(s, 0), r2(s, 2);
  EXPECT_TRUE(r2.empty());
  EXPECT_EQ(r2.Apply(1000, 5, 1), 1000);
  EXPECT_EQ(r3.Apply(1000, 1, 1), 1000);
  EXPECT_EQ(r3.Apply(1000, 2, 1), 1500);
  EXPECT_EQ(r3.Apply(1000, 3, 1), 1500);  // 1.5 x ramp's 1.0
  EXPECT_EQ(r3.Apply(1000, 4, 1), 1250);  // slow over; ramp 1.25
  EXPECT_EQ(r1.Apply(1000, 5, 1), 1500);
  EXPECT_EQ(r1.Apply(1000, 7, 1), 2000);
  EXPECT_EQ(r1.Apply(1000, 70, 1), 2000);  // holds at `to`
  EXPECT_EQ(r3.Apply(0, 2, 1), 0);
  EXPECT_EQ(r3.Apply(-1, 0, 1), -1);  // warm-up: untouched
  // Stalls: once at 2; every 2 from 3 for 4 iterations (3, 5); none on compute.
  std::vector<TimeNs> stalls;
  for (int k = 1; k <= 8; ++k) stalls.push_back(r0.Stall(k));
  EXPECT_EQ(stalls,
            (std::vector<TimeNs>{0, kNsPerSec, 200 * kNsPerMs, 0, 200 * kNsPerMs, 0, 0, 0}));
  EXPECT_EQ(r0.Apply(1000, 3, 1), 1000);
  EXPECT_EQ(r3.Stall(2), 0);
}

TEST(FaultedCompute, EventsSayWhenEachFaultBeganAndEndedAndWhichNeverDid) {
  auto s = Parse(R"(
faults:
  - {rank: 3, iteration: 2, iterations: 2, compute: 1.5x}
  - {rank: 3, iteration: 3, stall: 1s}
  - {rank: all, iteration: 9, jitter: 5%}
)");
  FaultedCompute r3(s, 3);
  std::vector<ComputeFaultEvent> events;
  for (int k = -1; k <= 4; ++k) r3.Starting(k, 100 * (k + 10), &events);
  r3.Unplayed(4, 5000, &events);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].action, "apply");
  EXPECT_EQ(events[0].iteration, 2);
  EXPECT_EQ(events[0].at_ns, 1200);
  EXPECT_EQ(events[0].entry, 1);
  EXPECT_EQ(events[0].rank, 3);
  EXPECT_EQ(events[1].action, "stall");
  EXPECT_EQ(events[1].iteration, 3);
  EXPECT_EQ(events[2].action, "undo");
  EXPECT_EQ(events[2].iteration, 4);
  EXPECT_EQ(events[3].action, "not applied");
  EXPECT_EQ(events[3].entry, 3);
  EXPECT_EQ(events[3].reason, "iteration 9 was never reached (the run ended after iteration 4)");
}

}  // namespace
}  // namespace genie::compute
