// Exact delivery times of the flow model (flow_model.h): max-min fair sharing, release of
// bandwidth when a flow ends, cut-through latency paid once, and the parameters goodput and
// message overhead. Links are 1 B/ns (bandwidth 1e9 / 2^30 GB/s) so that figures are round.
#include "genie/sim/flow_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
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

// Two leaves of two hosts joined by one spine, every link (spine links too) at 1 B/ns and
// 10 ns, goodput 1, no overhead; `burst`: the hosts' links' bucket and the spine links'.
config::NetworkConfig LeafSpine2x2(double host_burst, double spine_burst) {
  config::NetworkConfig c{"", {TopologyKind::kSwitch, TopologyKind::kSwitch}, {2, 2},
                          {kOneBytePerNs, kOneBytePerNs}, {10, 10}};
  c.goodput = {1.0};
  c.message_overhead_ns = {0.0};
  c.burst_bytes = {host_burst, spine_burst};
  c.leaf_spine = {1, kOneBytePerNs, 10};
  return c;
}

class Harness {
 public:
  explicit Harness(const config::NetworkConfig& net)
      : topology_(*Topology::Create(net)),
        model_(MakeNetworkModel(NetworkModelKind::kFlow, &topology_, &queue_)) {}
  // `flow`: Transmit's flow id, a collective chunk (0: none).
  size_t Send(int src, int dst, Bytes bytes, TimeNs at = 0, uint16_t channel = 0,
              uint64_t flow = 0) {
    size_t i = delivered_.size();
    delivered_.push_back(-1);
    queue_.At(at, [this, src, dst, bytes, i, channel, flow] {
      model_->Transmit(src, dst, bytes, flow, channel, [this, i] { delivered_[i] = queue_.Now(); });
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

// One connection (src, dst, channel) sends its messages one at a time, in order: the next
// leaves when the one before has left the bottleneck, pays the path's latency after it, and a
// zero-byte message waits its turn (100 ns of latency per path here).
TEST(FlowModelTest, MessagesOfOneConnectionLeaveInOrder) {
  Harness h(Star(4, 50));
  h.Send(0, 1, 1000);
  h.Send(0, 1, 500);
  h.Send(0, 1, 0);
  h.Send(2, 1, 0);  // another connection: not behind them
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1100, 1600, 1600, 100}));
  // A pair's channels are connections side by side: they share the link like any flows.
  Harness c(Star(4));
  c.Send(0, 1, 1000, 0, /*channel=*/0);
  c.Send(0, 1, 1000, 0, /*channel=*/1);
  c.Send(0, 1, 1000, 0, /*channel=*/0);  // behind the first
  EXPECT_EQ(c.Run(), (std::vector<TimeNs>{2000, 2000, 3000}));
}

// Slices of one pair sent at once never beat the link, on one channel or on several.
TEST(FlowModelTest, SlicesSentAtOnceNeverBeatTheLink) {
  Harness h(Star(2));
  for (int i = 0; i < 1000; ++i) h.Send(0, 1, 16);
  const auto& one = h.Run();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(one[i], 16 * (i + 1));
  Harness four(Star(2));
  for (int i = 0; i < 1000; ++i) four.Send(0, 1, 16, 0, static_cast<uint16_t>(i % 4));
  const auto& spread = four.Run();
  EXPECT_EQ(*std::max_element(spread.begin(), spread.end()), 16000);
  EXPECT_EQ(spread[3], 64);  // the first of each channel share the link four ways
  // Nor are they slower than it when a slice takes a fraction of a ns: each starts at the
  // exact end of the one before (16 B at 3 B/ns: 5.33 ns, not 6).
  config::NetworkConfig fast = Star(2);
  fast.bandwidth_gbps = {3 * kOneBytePerNs};
  Harness f(fast);
  for (int i = 0; i < 300; ++i) f.Send(0, 1, 16);
  const auto& fractions = f.Run();
  for (int i = 0; i < 300; ++i) EXPECT_EQ(fractions[i], (16 * (i + 1) + 2) / 3) << i;
}

// Nothing is delivered before the message sent ahead of it on its connection: a zero-byte
// message behind one whose measured time holds 4,000 ns of software delay waits for it.
TEST(FlowModelTest, AConnectionDeliversInOrder) {
  config::NetworkConfig net = Star(4, /*latency=*/10);
  net.message_overhead_ns = {80.0};
  net.message_times = {{1000, 5100}};  // 1,000 B: 1,000 ns on the wire, 4,000 ns beside it
  Harness h(net);
  h.Send(0, 1, 1000);
  h.Send(0, 1, 0);     // off at 1,000 ns, its latency would deliver it at 1,100
  h.Send(2, 1, 0, 0);  // another connection: latency only
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{5100, 5100, 100}));
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

// Leaf-spine, 2 leaves x 4 hosts: hosts at 1 B/ns, each leaf-spine link at half that, no
// latency, goodput 1, no overhead. Ranks 0-3 are leaf 0, 4-7 leaf 1.
config::NetworkConfig LeafSpine(int spines) {
  config::NetworkConfig c;
  c.topology = {TopologyKind::kSwitch, TopologyKind::kSwitch};
  c.npus_count = {4, 2};
  c.bandwidth_gbps = {kOneBytePerNs, kOneBytePerNs};
  c.latency_ns = {0, 0};
  c.goodput = {1.0};
  c.message_overhead_ns = {0.0};
  c.leaf_spine.spines = spines;
  c.leaf_spine.bandwidth_gbps = kOneBytePerNs / 2;
  c.leaf_spine.latency_ns = 0;
  return c;
}

// The 4 hosts of leaf 0 each send 8,000 B to a host of leaf 1: through one spine at half the
// host rate they share leaf 0's uplink, 1/8 of the host rate each (64,000 ns); with two spines
// twice that (each message split in two, 4 sub-flows on each uplink: 32,000 ns). The 2-D
// description without spines (ASTRA-sim's [Switch 4, Switch 2], dimension 1 at the host rate)
// sees no sharing at all: 8,000 ns.
TEST(FlowModelTest, LeafSpineHostsOfALeafShareItsUplinks) {
  for (auto [spines, expected] : {std::pair{1, TimeNs{64000}}, std::pair{2, TimeNs{32000}}}) {
    Harness h(LeafSpine(spines));
    for (int j = 0; j < 4; ++j) h.Send(j, 4 + j, 8000);
    EXPECT_EQ(h.Run(), std::vector<TimeNs>(4, expected)) << spines << " spine(s)";
    // Each uplink carried the 4 messages (sub-flows), 32,000 B / spines.
    int uplinks = 0;
    for (const LinkStats& l : h.model().link_stats()) {
      const std::string name = h.topology().LinkName(l.link);
      if (name.rfind("spines: leaf 0 -> spine", 0) != 0) continue;
      ++uplinks;
      EXPECT_EQ(l.messages, 4u) << name;
      EXPECT_EQ(l.bytes, static_cast<Bytes>(32000 / spines)) << name;
      EXPECT_EQ(l.busy_ns, expected) << name;
    }
    EXPECT_EQ(uplinks, spines);
    // A host's NIC counts each message once, though it carries one sub-flow per spine.
    for (const LinkStats& l : h.model().link_stats()) {
      if (h.topology().LinkName(l.link) == "dim 0: npu 0 -> switch 8 (dim 0)") {
        EXPECT_EQ(l.messages, 1u);
        EXPECT_EQ(l.bytes, 8000u);
      }
    }
  }
  config::NetworkConfig flat = LeafSpine(1);
  flat.leaf_spine = {};
  Harness two_d(flat);
  for (int j = 0; j < 4; ++j) two_d.Send(j, 4 + j, 8000);
  EXPECT_EQ(two_d.Run(), std::vector<TimeNs>(4, 8000));
}

// Intra-leaf traffic never touches the uplinks: while leaf 0's hosts 0-2 saturate the one
// spine (1/6 of the host rate each), host 3 -> host 0 and host 7 -> host 5 run at the full host
// rate, and no spine link sees them.
TEST(FlowModelTest, LeafSpineIntraLeafTrafficStaysOffTheUplinks) {
  Harness h(LeafSpine(1));
  for (int j = 0; j < 3; ++j) h.Send(j, 4 + j, 6000);
  h.Send(3, 0, 6000);
  h.Send(7, 5, 6000);  // host 5 also receives from host 1: its NIC gives 1/6 to that flow
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{36000, 36000, 36000, 6000, 6000 + 1200}));
  for (const LinkStats& l : h.model().link_stats()) {
    const std::string name = h.topology().LinkName(l.link);
    if (name.find("spine") != std::string::npos) {
      EXPECT_EQ(l.messages, 3u) << name;
    }
  }
}

// network.yml `oversubscription` R on 2 leaves x 4 hosts at 1 B/ns, `spines` S: the parser
// derives each leaf-spine link as 4 / (R x S) B/ns and dimension 1 (ASTRA-sim's view) is the
// host rate / R. (Powers of two: every rate is exact.)
config::NetworkConfig Oversubscribed(double ratio, int spines) {
  char yml[512];
  std::snprintf(yml, sizeof yml,
                "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ %.17g, %.17g ]\n"
                "latency: [ 0, 0 ]\ngoodput: 1\nmessage_overhead: 0\nspines: %d\n"
                "spine_latency: 0\noversubscription: %g\n",
                kOneBytePerNs, kOneBytePerNs / ratio, spines, ratio);
  auto c = config::ParseNetworkConfig(yml, "oversubscribed.yml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

// The 4 hosts of leaf 0 each send 8,000 B across to leaf 1 while, in a second run, each sends
// as much to its neighbour on the leaf: at R:1 the cross-leaf messages share 4/R B/ns of
// uplinks and take R times the intra-leaf ones (8,000 R ns against 8,000), however many spines
// carry it; 1:1 is non-blocking. The unaware model, on dimension 1's per-rank share, gives a
// lone cross-leaf message the same 8,000 R ns (its hosts never contend there: ASTRA-sim's view).
TEST(FlowModelTest, OversubscriptionSlowsCrossLeafTrafficByTheRatio) {
  for (double ratio : {1.0, 2.0, 4.0}) {
    for (int spines : {1, 2}) {
      Harness across(Oversubscribed(ratio, spines));
      for (int j = 0; j < 4; ++j) across.Send(j, 4 + j, 8000);
      const auto cross = static_cast<TimeNs>(8000 * ratio);
      EXPECT_EQ(across.Run(), std::vector<TimeNs>(4, cross)) << ratio << ":1, " << spines;
      Harness within(Oversubscribed(ratio, spines));
      for (int j = 0; j < 4; ++j) within.Send(j, (j + 1) % 4, 8000);
      EXPECT_EQ(within.Run(), std::vector<TimeNs>(4, 8000)) << ratio << ":1, " << spines;
      EXPECT_EQ(across.topology().UnawareDelay(0, 4, 8000), cross);
      EXPECT_EQ(across.topology().UnawareDelay(0, 1, 8000), 8000);
    }
  }
}

// Rail-optimized, 4:1: [NVLink 2, rail 4, pod 2] (rank = gpu + 2 (server + 4 pod)), every
// host link 1 B/ns, one spine, leaf_dimension 1: each rail's leaf in a pod has 4 GPUs' worth
// of host links and 1 B/ns up. GPU 0 of the 4 servers of pod 0 each send 8,000 B to pod 1 and
// share rail 0's uplink (32,000 ns); GPU 1's, on their own rail, do the same beside them and
// do not slow them. Sent instead to GPU 1 of pod 1, GPU 0's messages cross NVLink first and
// take rail 1's leaf (as NCCL's PXN does): rail 0's uplink stays idle.
// `fabric`: with the spine keys, else ASTRA-sim's [Switch 2, Switch 4, Switch 2] alone.
std::string RailYml(bool fabric) {
  return std::string(
             "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 2, 4, 2 ]\n"
             "bandwidth: [ 0.931322574615478515625, 0.931322574615478515625, "
             "0.23283064365386962890625 ]\nlatency: [ 0, 0, 0 ]\ngoodput: 1\n"
             "message_overhead: 0\n") +
         (fabric ? "spines: 1\nspine_latency: 0\noversubscription: 4\nleaf_dimension: 1\n" : "");
}

TEST(FlowModelTest, RailOptimizedRailsHaveTheirOwnUplinks) {
  auto c = config::ParseNetworkConfig(RailYml(true), "rail.yml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto rank = [](int gpu, int server, int pod) { return gpu + 2 * (server + 4 * pod); };
  Harness rails(*c);
  for (int gpu = 0; gpu < 2; ++gpu) {
    for (int s = 0; s < 4; ++s) rails.Send(rank(gpu, s, 0), rank(gpu, s, 1), 8000);
  }
  EXPECT_EQ(rails.Run(), std::vector<TimeNs>(8, 32000));

  Harness pxn(*c);
  for (int s = 0; s < 4; ++s) pxn.Send(rank(0, s, 0), rank(1, s, 1), 8000);
  EXPECT_EQ(pxn.Run(), std::vector<TimeNs>(4, 32000));
  int uplinks = 0;
  for (const LinkStats& l : pxn.model().link_stats()) {
    const std::string name = pxn.topology().LinkName(l.link);
    if (name == "spines: leaf 0 -> spine 0") {
      EXPECT_EQ(l.bytes, 0u) << name;
    }
    if (name == "spines: leaf 1 -> spine 0") {
      ++uplinks;
      EXPECT_EQ(l.bytes, 32000u);
    }
  }
  EXPECT_EQ(uplinks, 1);
}

// Split evenly with the remainder on the first spines; the message is delivered when its last
// sub-flow is, the path's latency paid once (host link, two spine links, host link). A message
// alone gets one path's rate, as its connection riding one spine would (0.5 B/ns: each of two
// sub-flows 0.25), not the two spines' together.
TEST(FlowModelTest, LeafSpineSplitEndsWithTheLastSubFlow) {
  config::NetworkConfig c = LeafSpine(2);
  c.latency_ns = {10, 10};
  c.leaf_spine.latency_ns = 100;
  Harness h(c);
  h.Send(0, 4, 1001);  // 501 B and 500 B at 0.25 B/ns each
  h.Send(1, 2, 3);     // intra-leaf: 2 x 10 + 3
  h.Send(5, 1, 1);     // the other way, 1 B and 0 B: the empty half waits only the latency
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2004 + 220, 23, 4 + 220}));
  EXPECT_EQ(h.model().active_flows(), 0u);
  // With spines as fast as the hosts, the host's link is the path's slowest: 1 B/ns in all.
  c.leaf_spine.bandwidth_gbps = kOneBytePerNs;
  Harness fast(c);
  fast.Send(0, 4, 1000);
  EXPECT_EQ(fast.Run()[0], 1000 + 220);
  // Two messages from one leaf's hosts share each uplink: two sub-flows on each, their fair
  // share 0.25, the caps' too.
  Harness two(LeafSpine(2));
  two.Send(0, 4, 1000);
  two.Send(1, 5, 1000);
  EXPECT_EQ(two.Run(), (std::vector<TimeNs>{2000, 2000}));
}

// Shaped spines, the hash unknown: the message takes one spine's bucket in expectation, so each
// of its S sub-flows takes 1/S of its spine's. 4,000 B over two spines with 2,000-byte buckets:
// 1,000 B of each half at once, the other 1,000 at 0.25 B/ns (as one spine: 2,000 at once,
// 2,000 at 0.5).
TEST(FlowModelTest, LeafSpineSplitMessageTakesOneSpinesBucket) {
  config::NetworkConfig c = LeafSpine(2);
  c.burst_bytes = {10000.0, 2000.0};
  Harness h(c);
  h.Send(0, 4, 4000);
  EXPECT_EQ(h.Run()[0], 4000);
}

// A connection whose messages are split over the spines sends the next when the last
// sub-flow of the one before has left.
TEST(FlowModelTest, LeafSpineSplitMessagesOfAConnectionFollowEachOther) {
  Harness h(LeafSpine(2));
  h.Send(0, 4, 1001);  // 501 + 500 B at 0.25 B/ns each: 2,004 ns
  h.Send(0, 4, 1000);  // then 500 + 500: 2,000 ns more
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2004, 4004}));
}

// A chunk's messages in flight together end with the slowest (flow_model.h, "Chunks"), as on
// the leaf-spine's moe_dp2_ep4: a bulk 0 -> 1 shares host 0's link with a chunk's hop within
// the leaf (0 -> 2) and host 1's with the same chunk's hop across a spine at 1/4 of the host
// rate (5 -> 1, 0.25 B/ns). Max-min alone: the bulk gets 0.5 while the short hop runs (ends
// at 2,000 ns), 0.75 while the one across the spine does (4,000), then 1 B/ns: 11,500 ns.
// Paced, the short hop takes 0.25 (its 1,000 B by 4,000 ns) and the bulk 0.75 from the start:
// 3,000 B by 4,000 ns, 11,000 ns in all. A hop with a message queued behind it on its
// connection is not paced (the one behind would wait), nor one whose pace no other flow gains
// by (it would only hold its links, whose buckets refill only while idle).
TEST(FlowModelTest, AChunksMessagesArePacedToEndWithItsSlowest) {
  config::NetworkConfig net = LeafSpine(1);
  net.leaf_spine.bandwidth_gbps = kOneBytePerNs / 4;
  {
    Harness h(net);
    h.Send(0, 1, 10000);
    h.Send(5, 1, 1000, 0, 0, 7);
    h.Send(0, 2, 1000, 0, 0, 7);
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{11000, 4000, 4000}));
  }
  {  // Not one chunk: max-min alone.
    Harness h(net);
    h.Send(0, 1, 10000);
    h.Send(5, 1, 1000, 0, 0, 7);
    h.Send(0, 2, 1000, 0, 0, 8);
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{11500, 4000, 2000}));
  }
  {  // Another message queued behind the short hop: it is not paced.
    Harness h(net);
    h.Send(0, 1, 10000);
    h.Send(5, 1, 1000, 0, 0, 7);
    h.Send(0, 2, 1000, 0, 0, 7);
    h.Send(0, 2, 500);
    const std::vector<TimeNs> d = h.Run();
    EXPECT_EQ(d[2], 2000);
  }
  {  // Alone on its links: ends when its bytes are out.
    Harness h(net);
    h.Send(0, 1, 1000, 0, 0, 7);
    h.Send(2, 3, 4000, 0, 0, 7);
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1000, 4000}));
  }
}

// ECMP with a known hash (ecmp_routes): hosts 0 and 1 -> 4 and 5 on spine 0, host 2 -> 6 on
// spine 1, host 3 -> 7 unlisted (split, 4,000 B on each). Spine 0's uplink (0.5 B/ns) holds three
// flows at 1/6 each until 3 -> 7's half ends (24,000 ns), then two at 1/4: 40,000 ns. Spine 1's
// holds two at 1/4 until 3 -> 7's other half ends (16,000 ns), then 2 -> 6 alone at 1/2: 24,000.
// Split evenly (no routes) every message takes 32,000 ns.
TEST(FlowModelTest, LeafSpineKnownEcmpRoutesTakeTheirSpine) {
  config::NetworkConfig c = LeafSpine(2);
  c.leaf_spine.routes = {{0, 4, 0}, {1, 5, 0}, {2, 6, 1}, {4, 0, 1}};
  Harness h(c);
  for (int j = 0; j < 4; ++j) h.Send(j, 4 + j, 8000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{40000, 40000, 24000, 24000}));
  std::map<std::string, uint64_t> messages;
  for (const LinkStats& l : h.model().link_stats()) {
    messages[h.topology().LinkName(l.link)] = l.messages;
  }
  EXPECT_EQ(messages["spines: leaf 0 -> spine 0"], 3u);
  EXPECT_EQ(messages["spines: leaf 0 -> spine 1"], 2u);
  EXPECT_EQ(messages["spines: spine 1 -> leaf 1"], 2u);
  // The path of a listed pair is one, on its spine (each direction its own entry).
  const Topology& t = h.topology();
  EXPECT_EQ(t.FlowPaths(0, 4), 1);
  EXPECT_EQ(t.FlowPaths(3, 7), 2);
  EXPECT_EQ(t.FlowPaths(5, 1), 2);
  std::vector<int> route;
  t.FlowRoute(4, 0, 0, &route);
  ASSERT_EQ(route.size(), 4u);
  EXPECT_EQ(t.LinkName(route[1]), "spines: leaf 1 -> spine 1");
  EXPECT_EQ(t.LinkName(route[2]), "spines: spine 1 -> leaf 0");
  Harness split(LeafSpine(2));
  for (int j = 0; j < 4; ++j) split.Send(j, 4 + j, 8000);
  EXPECT_EQ(split.Run(), std::vector<TimeNs>(4, 32000));
}

// ASTRA-sim's models read the same file as [Switch 4, Switch 2]: the spine keys change nothing.
TEST(FlowModelTest, LeafSpineKeysDoNotChangeTheAstraSimModels) {
  for (NetworkModelKind kind :
       {NetworkModelKind::kCongestionAware, NetworkModelKind::kCongestionUnaware}) {
    std::vector<std::vector<TimeNs>> runs;
    for (int spines : {0, 2}) {
      config::NetworkConfig c = LeafSpine(spines == 0 ? 1 : spines);
      if (spines == 0) c.leaf_spine = {};
      Topology t = *Topology::Create(c);
      EventQueue q;
      auto m = MakeNetworkModel(kind, &t, &q);
      std::vector<TimeNs> done(8, -1);
      for (int r = 0; r < 8; ++r) {
        m->Transmit(r, (r + 5) % 8, 4000, 0, 0, [&done, &q, r] { done[r] = q.Now(); });
      }
      q.Run();
      runs.push_back(done);
    }
    EXPECT_EQ(runs[0], runs[1]) << NetworkModelName(kind);
  }
}

// Nor do the rail-optimized fabric's (oversubscription, leaf_dimension): the aware and unaware
// models see [Switch 2, Switch 4, Switch 2] with dimension 2 at the share, as ASTRA-sim does.
TEST(FlowModelTest, RailKeysDoNotChangeTheAstraSimModels) {
  for (NetworkModelKind kind :
       {NetworkModelKind::kCongestionAware, NetworkModelKind::kCongestionUnaware}) {
    std::vector<std::vector<TimeNs>> runs;
    for (bool fabric : {false, true}) {
      Topology t = *Topology::Create(*config::ParseNetworkConfig(RailYml(fabric), "r.yml"));
      EventQueue q;
      auto m = MakeNetworkModel(kind, &t, &q);
      std::vector<TimeNs> done(16, -1);
      for (int r = 0; r < 16; ++r) {
        m->Transmit(r, (r + 9) % 16, 4000, 0, 0, [&done, &q, r] { done[r] = q.Now(); });
      }
      q.Run();
      runs.push_back(done);
    }
    EXPECT_EQ(runs[0], runs[1]) << NetworkModelName(kind);
    EXPECT_GT(*std::min_element(runs[1].begin(), runs[1].end()), 0);
  }
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

// Measured message times (network.yml message_times): a message alone on its path takes the
// table's time of its size (the path's fixed cost included), interpolated log-log between
// sizes, linear towards the fixed cost below the smallest and at the largest's rate above;
// shorter than the bytes at the rate, the message holds its links with fewer bytes.
TEST(FlowModelTest, MessageTimesSetEachSizesTimeAlone) {
  config::NetworkConfig net = Star(4, /*latency=*/10);
  net.message_overhead_ns = {80.0};  // fixed cost of a path: 2 x 10 + 80 = 100 ns
  net.message_times = {{1000, 600}, {4000, 2100}, {16000, 16100}};
  Harness h(net);
  h.Send(0, 1, 1000);               // 600 ns, as measured
  h.Send(1, 2, 16000);              // 16,100 ns
  h.Send(2, 3, 2000);               // log-log between 600 and 2,100: 600 x 3.5^0.5 = 1,122 ns
  h.Send(3, 0, 500, /*at=*/20000);  // below: (600 - 100) / 2 + 100 = 350 ns
  const auto d = h.Run();
  EXPECT_EQ(d[0], 600);
  EXPECT_EQ(d[1], 16100);
  EXPECT_NEAR(static_cast<double>(d[2]), 1122.5, 1.0);
  EXPECT_EQ(d[3], 20000 + 350);
  Harness big(net);
  big.Send(0, 1, 32000);  // above: (16,100 - 100) x 2 + 100
  big.Send(2, 1, 32000);  // into the same port: twice as long
  const auto b = big.Run();
  EXPECT_EQ(b[0], 2 * 2 * 16000 + 100);
  EXPECT_EQ(b[1], 2 * 2 * 16000 + 100);
  // Slower than the bytes at the rate (software): the excess is a delay that holds no link,
  // so two messages into one port share it for their bytes only.
  config::NetworkConfig slow = net;
  slow.message_times = {{1000, 2100}};
  Harness s(slow);
  s.Send(0, 1, 1000);
  EXPECT_EQ(s.Run()[0], 1000 + 1000 + 100);
  Harness shared(slow);
  shared.Send(0, 1, 1000);
  shared.Send(2, 1, 1000);
  EXPECT_EQ(shared.Run(), (std::vector<TimeNs>{2000 + 1100, 2000 + 1100}));
  // Without the table: bytes at the link rate plus the fixed cost.
  net.message_times.clear();
  Harness plain(net);
  plain.Send(0, 1, 1000);
  EXPECT_EQ(plain.Run()[0], 1100);
}

// Shaped links (network.yml `burst`): a full bucket lets that many bytes out at once, the rest
// leaves at the rate; an idle link refills at its rate up to the bucket; a busy one does not.
TEST(FlowModelTest, AShapersBucketLetsItsBurstOutAtOnceAndRefillsWhileIdle) {
  config::NetworkConfig net = Star(4, /*latency=*/10);  // fixed cost 2 x 10 ns per path
  net.burst_bytes = {3000.0};                           // x goodput 1: 3,000 bytes
  Harness h(net);
  h.Send(0, 1, 1000);                // all of it in the burst: the path's 20 ns only
  h.Send(2, 3, 5000);                // 3,000 at once, 2,000 at 1 B/ns
  h.Send(0, 1, 4000, /*at=*/10000);  // uplink 0 refilled (idle 10 us): 3,000 + 1,000 B
  const auto d = h.Run();
  EXPECT_EQ(d[0], 20);
  EXPECT_EQ(d[1], 2000 + 20);
  EXPECT_EQ(d[2], 10000 + 1000 + 20);
  // Back to back on one connection the second message leaves the moment the first has left:
  // the bucket had no time to refill.
  Harness b2b(net);
  b2b.Send(0, 1, 3000);
  b2b.Send(0, 1, 3000);
  const auto e = b2b.Run();
  EXPECT_EQ(e[0], 20);   // the whole bucket
  EXPECT_EQ(e[1], 3000 + 20);  // none left: its bytes at the rate, right behind the first
  // A rank whose links were busy until shortly before (a measured iteration's idle time):
  // its buckets hold only what that time refilled, 1,000 bytes here; the receiver's is full.
  Harness idle(net);
  idle.model().set_idle_since(0, -1000);
  idle.Send(0, 1, 2000);
  EXPECT_EQ(idle.Run()[0], 1000 + 20);
  // Burst 0: no shaper, no bucket.
  config::NetworkConfig unshaped = net;
  unshaped.burst_bytes = {0.0};
  Harness u(unshaped);
  u.Send(0, 1, 1000);
  EXPECT_EQ(u.Run()[0], 1000 + 20);
  // A path with an unshaped link gets no burst: a leaf-spine whose spines are not shaped
  // (dimension 1's burst 0), across the spine; within a leaf the burst holds.
  Harness m(LeafSpine2x2(3000.0, 0.0));
  m.Send(0, 1, 1000);  // within leaf 0: all of it in the burst
  m.Send(2, 1, 1000);  // across the spine (rank 2 is in leaf 1): its bytes at the rate
  const auto f = m.Run();
  EXPECT_EQ(f[0], 20);
  EXPECT_GE(f[1], 1000);
}

// A leaf-spine whose spine links are shaped too (dimension 1's burst): a message across gets
// the burst of its emptiest bucket. A measured iteration's idle times empty the leaf's spine
// links as of the latest of its hosts (they carried every host's traffic until then).
TEST(FlowModelTest, ShapedSpineLinksRefillFromTheLatestOfTheirLeafsHosts) {
  const config::NetworkConfig ls = LeafSpine2x2(3000.0, 3000.0);
  Harness full(ls);
  full.Send(0, 2, 2000);  // every bucket full: all of it at once, the path's 4 x 10 ns
  EXPECT_EQ(full.Run()[0], 40);
  Harness idle(ls);
  idle.model().set_idle_since(0, -1000);  // host 0's links: 1,000 bytes refilled
  idle.model().set_idle_since(1, -500);   // leaf 0's spine links: 500, as of host 1
  idle.Send(0, 2, 2000);                  // 500 at once (the uplink), 1,500 at 1 B/ns
  EXPECT_EQ(idle.Run()[0], 1500 + 40);
  // Into leaf 0 from leaf 1, whose links were not touched: the spine's link down to leaf 0
  // and host 1's own hold 500 each; with the order of the calls reversed, the same.
  Harness back(ls);
  back.model().set_idle_since(1, -500);
  back.model().set_idle_since(0, -1000);
  back.Send(3, 1, 2000);
  EXPECT_EQ(back.Run()[0], 1500 + 40);
}

// With the buckets' table (burst_message_times) no message beats its size's time, however much
// its buckets let out; and the table replaces message_times on shaped paths (a steady ring step
// is the burst model's own: bytes at the rate, the software hidden while buckets refill).
TEST(FlowModelTest, BurstMessageTimesAreAFloorOnShapedPaths) {
  config::NetworkConfig net = Star(4, /*latency=*/10);
  net.burst_bytes = {100000.0};
  net.burst_message_times = {{1000, 500}, {4000, 800}};
  net.message_times = {{1000, 5000}, {4000, 9000}};  // not used on shaped paths
  Harness h(net);
  h.Send(0, 1, 1000);    // burst: floor 500
  h.Send(1, 2, 2000);    // log-log between: 500 x 1.6^0.5 = 632.5
  h.Send(2, 3, 8000);    // above the largest in proportion: 1,600
  h.Send(3, 0, 500);     // below the smallest: its time, 500
  const auto d = h.Run();
  EXPECT_EQ(d[0], 500);
  EXPECT_NEAR(static_cast<double>(d[1]), 632.5, 1.0);
  EXPECT_EQ(d[2], 1600);
  EXPECT_EQ(d[3], 500);
  // Past the bucket the rate holds: 150,000 bytes, 100,000 in the burst, 50,000 at 1 B/ns.
  Harness big(net);
  big.Send(0, 1, 150000);
  EXPECT_EQ(big.Run()[0], 50000 + 20);
}

}  // namespace
}  // namespace genie::sim
