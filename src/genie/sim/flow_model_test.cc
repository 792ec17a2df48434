// Exact delivery times of the flow model (flow_model.h): max-min fair sharing, release of
// bandwidth when a flow ends, cut-through latency paid once, and the parameters goodput and
// message overhead; shapers' buckets. Links are 1 B/ns (bandwidth 1e9 / 2^30 GB/s) so that figures
// are round. Leaf-spine and rail-optimized fabrics: flow_model_fabric_test.cc.
#include "genie/sim/flow_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "genie/config/network_config.h"
#include "genie/sim/flow_model_harness.h"
#include "genie/sim/host_slots.h"

namespace genie::sim {
namespace {

using config::TopologyKind;
using testing::Harness;
using testing::kOneBytePerNs;

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

// Host slots (sim/host_slots.h) on shaped host links (a bucket of 50,000 B): a message of
// 100,000 B from host 0 to host 1 lets half out at once and takes 50,000 ns, whichever slots it
// joins; from slot 1 of host 0 to slot 0 of host 1 its route ends on host 1's loopback (2 GB/s,
// unshaped), which must not leave it without its burst (it took 100,000 ns). It pays the
// loopback's latency (two hops of 1 us) and message overhead (5 us) on top. A message within one host, on its
// loopback alone, has no bucket to draw on, the loopback dimension set or not.
TEST(FlowModelTest, AHostsLoopbackNeitherShapesNorUnshapesAMessageBetweenHosts) {
  config::NetworkConfig c = Star(4);
  c.burst_bytes = {50'000};
  const config::NetworkConfig slots = WithHostSlots(c, 2);  // NPU = host + 4 x slot
  auto run = [&](int src, int dst, bool loopback) {
    Harness h(slots);
    h.Fold(HostSlotLinkFold(h.topology(), 4), /*copies=*/false);
    if (loopback) h.model().set_loopback_dimension(1);
    h.Send(src, dst, 100'000);
    return h.Run()[0];
  };
  EXPECT_EQ(run(0, 1, true), 50'000);
  EXPECT_EQ(run(0, 1, true), run(0, 1, false));
  EXPECT_EQ(run(5, 6, true), 50'000);  // slot 1 to slot 1: the same links, folded
  EXPECT_EQ(run(4, 1, true), 50'000 + 2 * 1'000 + 5'000);
  EXPECT_GE(run(4, 1, false), 100'000);
  EXPECT_EQ(run(0, 4, true), run(0, 4, false));
}

// One machine's cores (machine_bandwidth, 2 B/ns of loopback bytes): messages within hosts,
// each on its own host's loopback (1 B/ns), share it at equal rates. One or two at once go at
// their loopback's rate, four at half of it; a message between hosts costs 1.5 loopback bytes
// per byte (kFabricByteCost): alone it keeps its link, beside the four all five get 2 / 5.5 B/ns.
// Without the machine's rate the four hosts' loopbacks are each their own.
TEST(FlowModelTest, EveryMessageSharesTheMachinesCores) {
  config::NetworkConfig c = WithHostSlots(Star(4), 2);  // NPU = host + 4 x slot
  c.bandwidth_gbps[1] = kOneBytePerNs;
  c.latency_ns[1] = 0;
  c.goodput[1] = 1.0;
  c.message_overhead_ns[1] = 0;
  ASSERT_EQ(FlowModel::kFabricByteCost, 1.5);
  auto run = [&](int within, double machine, bool between) {
    Harness h(c);
    h.Fold(HostSlotLinkFold(h.topology(), 4), /*copies=*/false);
    h.model().set_loopback_dimension(1);
    h.model().set_machine_bandwidth(machine);
    for (int host = 0; host < within; ++host) h.Send(host, host + 4, 1000);
    if (between) h.Send(0, 1, 1000);
    return h.Run();
  };
  const double two = 2 * kOneBytePerNs;
  EXPECT_EQ(run(1, two, false), (std::vector<TimeNs>{1000}));
  EXPECT_EQ(run(2, two, false), (std::vector<TimeNs>{1000, 1000}));
  EXPECT_EQ(run(4, two, false), (std::vector<TimeNs>{2000, 2000, 2000, 2000}));
  EXPECT_EQ(run(0, two, true), (std::vector<TimeNs>{1000}));
  EXPECT_EQ(run(4, two, true), (std::vector<TimeNs>{2750, 2750, 2750, 2750, 2750}));
  EXPECT_EQ(run(4, 0, false), (std::vector<TimeNs>{1000, 1000, 1000, 1000}));
}

// A message between hosts held by its own link first (1 B/ns, under its share of the machine's
// 6 B/ns) takes 1.5 of the machine's bytes per byte at that rate; the four loopbacks (4 B/ns
// each) share what is left: (6 - 1.5) / 4 B/ns each. The machine-wide link is in no link_stats.
TEST(FlowModelTest, AMessageHeldByItsOwnLinkLeavesTheMachineToTheOthers) {
  config::NetworkConfig c = WithHostSlots(Star(4), 2);
  c.bandwidth_gbps[1] = 4 * kOneBytePerNs;
  c.latency_ns[1] = 0;
  c.goodput[1] = 1.0;
  c.message_overhead_ns[1] = 0;
  Harness h(c);
  h.Fold(HostSlotLinkFold(h.topology(), 4), /*copies=*/false);
  h.model().set_loopback_dimension(1);
  h.model().set_machine_bandwidth(6 * kOneBytePerNs);
  for (int host = 0; host < 4; ++host) h.Send(host, host + 4, 1000);
  h.Send(0, 1, 1000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{889, 889, 889, 889, 1000}));
  for (const LinkStats& s : h.model().link_stats()) EXPECT_LT(s.link, h.topology().num_links());
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

// Two ranks on one host (host slots) share its shaped links: the bucket refilled from when the
// later of them stopped, in whichever order their idle times are given.
TEST(FlowModelTest, AHostsRanksInSlotsRefillItsBucketFromTheLaterOfThem) {
  config::NetworkConfig net = Star(4, /*latency=*/10);
  net.burst_bytes = {3000.0};
  for (bool slot1_first : {false, true}) {
    Harness h(WithHostSlots(net, 2));  // NPU = host + 4 x slot
    h.Fold(HostSlotLinkFold(h.topology(), 4), /*copies=*/false);
    h.model().set_loopback_dimension(1);
    if (slot1_first) h.model().set_idle_since(4, -1000);
    h.model().set_idle_since(0, -2500);  // host 0, slot 0: idle 2.5 us
    if (!slot1_first) h.model().set_idle_since(4, -1000);  // slot 1: idle 1 us
    h.Send(0, 1, 2000);  // 1,000 bytes refilled (as of slot 1), 1,000 at 1 B/ns
    EXPECT_EQ(h.Run()[0], 1000 + 20) << (slot1_first ? "slot 1 given first" : "slot 0 first");
  }
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
