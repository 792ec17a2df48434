// The flow model on leaf-spine fabrics (network.yml's spines, oversubscription, leaf_dimension,
// ecmp_routes): hosts of a leaf sharing its uplinks, traffic within a leaf staying off them,
// ECMP split over the spines, oversubscription, rail-optimized leaves, and the ASTRA-sim models
// left unchanged by the fabric keys. Exact delivery times; links at 1 B/ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "genie/config/network_config.h"
#include "genie/sim/flow_model_harness.h"

namespace genie::sim {
namespace {

using config::TopologyKind;
using testing::Harness;
using testing::kOneBytePerNs;

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

// ECMP hashing ports (ecmp_connections): each connection (src, dst, channel) on its own spine,
// before its pair's ecmp_routes entry. 0 -> 4 and 1 -> 5 on channel 0 share spine 0's uplink
// (0.5 B/ns: 1/4 each, 32,000 ns), though the pair 1 -> 5 is listed on spine 1; 1 -> 5's
// channel 1 rides spine 1 alone (1/2: 16,000 ns). A channel not listed takes its pair's route,
// or (none) the split.
TEST(FlowModelTest, LeafSpineKnownConnectionsTakeTheirSpine) {
  config::NetworkConfig c = LeafSpine(2);
  c.leaf_spine.routes = {{1, 5, 1}};
  c.leaf_spine.connections = {{0, 4, 0, 0}, {1, 5, 0, 0}, {1, 5, 1, 1}};
  Harness h(c);
  h.Send(0, 4, 8000, 0, 0);
  h.Send(1, 5, 8000, 0, 0);
  h.Send(1, 5, 8000, 0, 1);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{32000, 32000, 16000}));
  std::map<std::string, uint64_t> messages;
  for (const LinkStats& l : h.model().link_stats()) {
    messages[h.topology().LinkName(l.link)] = l.messages;
  }
  EXPECT_EQ(messages["spines: leaf 0 -> spine 0"], 2u);
  EXPECT_EQ(messages["spines: leaf 0 -> spine 1"], 1u);
  const Topology& t = h.topology();
  EXPECT_EQ(t.FlowPaths(0, 4, 0), 1);
  EXPECT_EQ(t.FlowPaths(0, 4, 1), 2);  // not listed: split
  EXPECT_EQ(t.FlowPaths(0, 4), 2);     // no channel: the pair's
  EXPECT_EQ(t.FlowPaths(1, 5, 2), 1);  // not listed: the pair's route
  std::vector<int> route;
  t.FlowRoute(1, 5, 0, &route, 0);
  EXPECT_EQ(t.LinkName(route[1]), "spines: leaf 0 -> spine 0");
  t.FlowRoute(1, 5, 0, &route, 2);
  EXPECT_EQ(t.LinkName(route[1]), "spines: leaf 0 -> spine 1");
  // The key is rejected where it cannot hold: within a leaf, past the spines.
  for (const config::EcmpConnection& bad :
       {config::EcmpConnection{0, 1, 0, 0}, config::EcmpConnection{0, 4, 0, 2},
        config::EcmpConnection{0, 8, 0, 0}}) {
    config::NetworkConfig b = LeafSpine(2);
    b.leaf_spine.connections = {bad};
    EXPECT_FALSE(Topology::Create(b).ok()) << bad.src << " -> " << bad.dst;
  }
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

}  // namespace
}  // namespace genie::sim
