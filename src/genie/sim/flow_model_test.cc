// Exact delivery times of the flow model (flow_model.h): max-min fair sharing, release of
// bandwidth when a flow ends, cut-through latency paid once, and the parameters goodput and
// message overhead. Links are 1 B/ns (bandwidth 1e9 / 2^30 GB/s) so that figures are round.
#include "genie/sim/flow_model.h"

#include <gtest/gtest.h>

#include <memory>

#include "genie/config/network_config.h"

namespace genie::sim {
namespace {

using config::TopologyKind;

constexpr double kOneBytePerNs = 1e9 / (1 << 30);  // GB/s

// A Switch of `n` NPUs at 1 B/ns per link, `latency` ns per link, goodput 1, no overhead.
config::NetworkConfig Star(int n, double latency = 0) {
  config::NetworkConfig c{"", {TopologyKind::kSwitch}, {n}, {kOneBytePerNs}, {latency}};
  c.goodput = {1.0};
  c.message_overhead_ns = {0.0};
  return c;
}

class Harness {
 public:
  explicit Harness(const config::NetworkConfig& net)
      : topology_(*Topology::Create(net)),
        model_(MakeNetworkModel(NetworkModelKind::kFlow, &topology_, &queue_)) {}
  size_t Send(int src, int dst, Bytes bytes, TimeNs at = 0) {
    size_t i = delivered_.size();
    delivered_.push_back(-1);
    queue_.At(at, [this, src, dst, bytes, i] {
      model_->Transmit(src, dst, bytes, 0, [this, i] { delivered_[i] = queue_.Now(); });
    });
    return i;
  }
  const std::vector<TimeNs>& Run() {
    queue_.Run();
    return delivered_;
  }
  FlowModel& model() { return static_cast<FlowModel&>(*model_); }
  const EventQueue& queue() const { return queue_; }
  const Topology& topology() const { return topology_; }

 private:
  EventQueue queue_;
  Topology topology_;
  std::unique_ptr<NetworkModel> model_;
  std::vector<TimeNs> delivered_;
};

TEST(FlowModelTest, NameAndKind) {
  EXPECT_EQ(ParseNetworkModelKind("flow"), NetworkModelKind::kFlow);
  EXPECT_STREQ(NetworkModelName(NetworkModelKind::kFlow), "flow");
  Harness h(Star(2));
  EXPECT_EQ(h.model().kind(), NetworkModelKind::kFlow);
}

TEST(FlowModelTest, OneFlowTakesTheLinkRate) {
  Harness h(Star(4));
  h.Send(0, 1, 1000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1000}));
}

// Two flows into one receiver share its switch port: half each, both end at 2,000 ns.
TEST(FlowModelTest, TwoFlowsSharingALinkGetHalfEach) {
  Harness h(Star(4));
  h.Send(0, 2, 1000);
  h.Send(1, 2, 1000);
  h.Send(3, 1, 1000);  // another receiver, another sender: unaffected
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2000, 2000, 1000}));
  // The shared port saw two flows at once (max_queue = flows beside the first).
  bool found = false;
  for (const LinkStats& l : h.model().link_stats()) {
    if (h.topology().LinkName(l.link) == "dim 0: switch 4 (dim 0) -> npu 2") {
      found = true;
      EXPECT_EQ(l.messages, 2u);
      EXPECT_EQ(l.bytes, 2000u);
      EXPECT_EQ(l.busy_ns, 2000);
      EXPECT_EQ(l.max_queue, 1u);
    }
  }
  EXPECT_TRUE(found);
}

// 1,000 and 3,000 bytes share a link: half each until 2,000 ns, when the short one ends and
// releases its half; the long one has 2,000 bytes left at the full rate: 4,000 ns.
TEST(FlowModelTest, AFlowEndingReleasesItsBandwidth) {
  Harness h(Star(4));
  h.Send(0, 2, 1000);
  h.Send(1, 2, 3000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2000, 4000}));
  EXPECT_EQ(h.model().active_flows(), 0u);
}

// A flow that starts later slows the one in flight from then on.
TEST(FlowModelTest, AFlowStartingTakesItsShare) {
  Harness h(Star(4));
  h.Send(0, 2, 2000);       // alone for 1,000 ns: 1,000 B left
  h.Send(1, 2, 500, 1000);  // then half each: 500 B each by 2,000 ns
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2500, 2000}));
}

// Cut-through: the path's latency (two links of 100 ns) is paid once, after the bottleneck,
// not once per hop with the transfer repeated (the congestion-aware model's store and forward:
// 2 x (100 + 1000)).
TEST(FlowModelTest, CutThroughPaysThePathLatencyOnce) {
  Harness h(Star(4, 100));
  h.Send(0, 1, 1000);
  h.Send(2, 3, 0);  // latency only
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1200, 200}));
  Harness self(Star(4, 100));
  self.Send(1, 1, 1000);  // to itself: nothing crosses the network
  EXPECT_EQ(self.Run(), (std::vector<TimeNs>{0}));
}

// Max-min fairness on a star of 4 at 1 B/ns.
// First: A: 0 -> 3, B: 1 -> 3, C: 1 -> 2. Port 3 carries A and B, npu 1's uplink B and C: all
// three at 1/2. C ends at 3,000; B is then alone on its uplink but still shares port 3 with A.
// Second, three flows with different bottlenecks and rates: A, B, C all into npu 3 (port 3 is
// their bottleneck: 1/3 each) and D: 2 -> 1, which shares npu 2's uplink with C and gets the
// 2/3 C leaves (its bottleneck is that uplink, at a different share).
TEST(FlowModelTest, ThreeFlowMaxMinWithDifferentBottlenecks) {
  Harness h(Star(4));
  h.Send(0, 3, 3000);  // A: port 3 shared with B, B with C
  h.Send(1, 3, 3000);  // B
  h.Send(1, 2, 1500);  // C: its uplink is shared with B; ends at 3,000
  // Each at 1/2: C ends at 3,000 (1,500 B). Then B is alone on npu 1's uplink but still
  // shares port 3 with A: still 1/2 each; A and B end together at 6,000.
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{6000, 6000, 3000}));

  Harness u(Star(4));
  u.Send(0, 3, 3000);  // A: 1/3 on port 3
  u.Send(1, 3, 3000);  // B: 1/3
  u.Send(2, 3, 3000);  // C: 1/3; port 3 is their bottleneck
  u.Send(2, 1, 4000);  // D: npu 2's uplink has 1 - 1/3 = 2/3 left for D
  // A, B, C end at 9,000. D has sent 6,000 x 2/3 = 4,000 B by 6,000 ns: it ends first, and
  // frees nothing the port-3 flows need (they are bottlenecked on port 3).
  EXPECT_EQ(u.Run(), (std::vector<TimeNs>{9000, 9000, 9000, 6000}));
}

// A: 0 -> 1, B: 0 -> 2, C: 3 -> 2. npu 0's uplink carries A and B, port 2 carries B and C:
// all at 1/2. B speeds up only when both its shared links clear.
TEST(FlowModelTest, RateRisesWhenTheBottleneckClears) {
  Harness h(Star(4));
  h.Send(0, 1, 1000);
  h.Send(0, 2, 3000);
  h.Send(3, 2, 1000);
  // A and C end at 2,000; B has 2,000 B left, alone: 4,000.
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2000, 4000, 2000}));
  Harness g(Star(4));
  g.Send(0, 1, 1000);
  g.Send(0, 2, 3000);
  g.Send(3, 2, 2000);
  // A ends at 2,000 (B and C have 2,000 / 1,000 B left); B, C at 1/2 until C ends at 4,000
  // (B: 1,000 B left), then B alone: 5,000.
  EXPECT_EQ(g.Run(), (std::vector<TimeNs>{2000, 5000, 4000}));
}

TEST(FlowModelTest, GoodputAndOverheadAreParameters) {
  config::NetworkConfig c = Star(4, 100);
  c.goodput = {0.5};
  c.message_overhead_ns = {300};
  Harness h(c);
  h.Send(0, 1, 1000);  // 1000 / 0.5 + 2 x 100 + 300
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2500}));
  // The defaults: goodput 0.94, 5 us per message.
  config::NetworkConfig d{"", {TopologyKind::kSwitch}, {4}, {kOneBytePerNs}, {0}};
  Harness dh(d);
  dh.Send(0, 1, 940);
  EXPECT_EQ(dh.Run(), (std::vector<TimeNs>{1000 + 5000}));
}

// Multi-dimensional: a message crossing both dimensions is one flow on the links of each; the
// slowest (dim 1 at half the rate) is its bottleneck, the latencies add once, and the overhead
// is the largest of the dimensions crossed.
TEST(FlowModelTest, MultiDimensionalPathsAndBottleneck) {
  config::NetworkConfig c{"",
                          {TopologyKind::kSwitch, TopologyKind::kSwitch},
                          {2, 2},
                          {kOneBytePerNs, kOneBytePerNs / 2},
                          {10, 20}};
  c.goodput = {1.0};
  c.message_overhead_ns = {0, 50};
  Harness h(c);
  h.Send(0, 3, 1000);  // (0,0) -> (1,1): 2 x 10 + 2 x 20 + 50 + 1000 / 0.5
  h.Send(1, 0, 1000);  // dim 0 only: 2 x 10 + 1000
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2110, 1020}));
}

// Messages of one pair sent at once (slices, channels) share the link: in aggregate they never
// beat it.
TEST(FlowModelTest, SlicesSentAtOnceShareTheLink) {
  Harness h(Star(2));
  for (int i = 0; i < 1000; ++i) h.Send(0, 1, 16);
  for (TimeNs t : h.Run()) EXPECT_EQ(t, 16000);
  EXPECT_EQ(h.model().recomputations(), 2u);  // started together, ended together
}

// A ring step on a star: every rank sends to the next, no link is shared; each flow is its own
// component, so recomputation touches one flow at a time.
TEST(FlowModelTest, DisjointFlowsAreRecomputedAlone) {
  Harness h(Star(64));
  for (int r = 0; r < 64; ++r) h.Send(r, (r + 1) % 64, 1000);
  for (TimeNs t : h.Run()) EXPECT_EQ(t, 1000);
  // The 64 starts settle in one pass, the 64 ends in another; each walk only sees the flows
  // on the links touched (at the end: none left).
  EXPECT_EQ(h.model().recomputations(), 2u);
  EXPECT_EQ(h.model().flows_recomputed(), 64u);
}

TEST(FlowModelTest, DelayPastTheEndOfTimeIsAnErrorNamingTheMessage) {
  config::NetworkConfig slow{"slow.yml", {TopologyKind::kSwitch}, {4}, {1e-6}, {500.0}};
  Harness h(slow);
  h.Send(0, 1, Bytes{1} << 60);
  h.Send(2, 3, 1);
  const auto& t = h.Run();
  EXPECT_EQ(t[0], -1);
  ASSERT_TRUE(h.queue().failed());
  const std::string& m = h.queue().status().message();
  EXPECT_NE(m.find(std::to_string(Bytes{1} << 60) + "-byte message from npu 0 to npu 1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("slow.yml"), std::string::npos) << m;
}

}  // namespace
}  // namespace genie::sim
