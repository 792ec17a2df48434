// A 3-tier fat-tree (network.yml super_spines): the topology's shape (links, devices, names),
// its routes (within a leaf, across leaves of a pod, across pods through the core) and their
// hop counts, the flow model's ECMP split over the super-spines, oversubscription at the spine
// tier, and the ASTRA-sim models left as they read the same file. Exact figures; links at
// 1 B/ns.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "genie/config/network_config.h"
#include "genie/sim/flow_model_harness.h"
#include "genie/sim/symmetry.h"
#include "genie/sim/topology.h"

namespace genie::sim {
namespace {

using config::TopologyKind;
using testing::Harness;
using testing::kOneBytePerNs;

// 2 pods x 2 leaves x 2 hosts: ranks 0-1 on leaf 0, 2-3 on leaf 1 (pod 0), 4-5 on leaf 2, 6-7 on
// leaf 3 (pod 1). 2 spines per pod, 4 super-spines (2 planes of 2). Every link at 1 B/ns,
// goodput 1, no overhead; latencies distinct per tier so that a route's sum names its tiers.
config::NetworkConfig ThreeTier() {
  config::NetworkConfig c;
  c.topology = {TopologyKind::kSwitch, TopologyKind::kSwitch, TopologyKind::kSwitch};
  c.npus_count = {2, 2, 2};
  c.bandwidth_gbps = {kOneBytePerNs, kOneBytePerNs, kOneBytePerNs};
  c.latency_ns = {1, 0, 0};
  c.goodput = {1.0};
  c.message_overhead_ns = {0.0};
  c.leaf_spine.spines = 2;
  c.leaf_spine.bandwidth_gbps = kOneBytePerNs;
  c.leaf_spine.latency_ns = 10;
  c.leaf_spine.super_spines = 4;
  c.leaf_spine.super_bandwidth_gbps = kOneBytePerNs;
  c.leaf_spine.super_latency_ns = 100;
  return c;
}

std::vector<std::string> Names(const Topology& t, const std::vector<int>& links) {
  std::vector<std::string> names;
  for (int l : links) names.push_back(t.LinkName(l));
  return names;
}

TEST(ThreeTierTest, ShapeCountsEveryTiersLinksAndDevices) {
  auto t = Topology::Create(ThreeTier());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->three_tier());
  EXPECT_EQ(t->pods(), 2);
  // 3 Switch dimensions of 4 blocks x 2 members x 2 directions (48); 4 leaves x 2 spines x 2
  // (16); 2 pods x 2 spines x 2 super-spines of their plane x 2 (16).
  EXPECT_EQ(t->num_links(), 48 + 16 + 16);
  // 8 NPUs, 12 switches (ASTRA-sim's per-dimension blocks), 4 spines, 4 super-spines.
  EXPECT_EQ(t->num_devices(), 8 + 12 + 4 + 4);
  EXPECT_EQ(t->LinkName(48), "spines: leaf 0 -> spine 0 (pod 0)");
  EXPECT_EQ(t->LinkName(48 + 16 - 1), "spines: spine 3 (pod 1) -> leaf 3");
  EXPECT_EQ(t->LinkName(64), "super-spines: spine 0 (pod 0) -> super-spine 0");
  EXPECT_EQ(t->LinkName(64 + 3), "super-spines: super-spine 1 -> spine 0 (pod 0)");
  // Spine 1 of each pod is in plane 1: super-spines 2 and 3.
  EXPECT_EQ(t->LinkName(64 + 4), "super-spines: spine 1 (pod 0) -> super-spine 2");
  EXPECT_EQ(t->LinkName(64 + 8), "super-spines: spine 2 (pod 1) -> super-spine 0");
  for (int id = 48; id < 64; ++id) EXPECT_EQ(t->link_dim(id), 1) << t->LinkName(id);
  for (int id = 64; id < 80; ++id) {
    EXPECT_EQ(t->link_dim(id), 2) << t->LinkName(id);
    EXPECT_TRUE(t->IsSuperLink(id));
    EXPECT_EQ(t->link_latency_ns(id), 100);
  }
}

// Within a leaf: 2 hops, 1 path. Across leaves of a pod: 4 hops over one of the pod's 2
// spines. Across pods: 6 hops over one of the 4 super-spines, through spine q / 2 of each pod.
TEST(ThreeTierTest, RoutesWithinALeafAcrossLeavesAndAcrossPods) {
  auto t = Topology::Create(ThreeTier());
  ASSERT_TRUE(t.ok());
  std::vector<int> links;
  EXPECT_EQ(t->FlowPaths(0, 1), 1);
  t->FlowRoute(0, 1, 0, &links);
  EXPECT_EQ(Names(*t, links), (std::vector<std::string>{"dim 0: npu 0 -> switch 8 (dim 0)",
                                                        "dim 0: switch 8 (dim 0) -> npu 1"}));
  EXPECT_EQ(t->FlowPaths(0, 3), 2);
  t->FlowRoute(0, 3, 1, &links);
  EXPECT_EQ(Names(*t, links),
            (std::vector<std::string>{"dim 0: npu 0 -> switch 8 (dim 0)",
                                      "spines: leaf 0 -> spine 1 (pod 0)",
                                      "spines: spine 1 (pod 0) -> leaf 1",
                                      "dim 0: switch 9 (dim 0) -> npu 3"}));
  EXPECT_EQ(t->FlowPaths(1, 6), 4);
  t->FlowRoute(1, 6, 2, &links);
  EXPECT_EQ(Names(*t, links),
            (std::vector<std::string>{"dim 0: npu 1 -> switch 8 (dim 0)",
                                      "spines: leaf 0 -> spine 1 (pod 0)",
                                      "super-spines: spine 1 (pod 0) -> super-spine 2",
                                      "super-spines: super-spine 2 -> spine 3 (pod 1)",
                                      "spines: spine 3 (pod 1) -> leaf 3",
                                      "dim 0: switch 11 (dim 0) -> npu 6"}));
  // Every path across pods is 6 hops with the same latency, each through its own super-spine.
  for (int q = 0; q < 4; ++q) {
    t->FlowRoute(5, 0, q, &links);
    ASSERT_EQ(links.size(), 6u) << q;
    double latency = 0;
    for (int l : links) latency += t->link_latency_ns(l);
    EXPECT_EQ(latency, 2 * 1 + 2 * 10 + 2 * 100) << q;
    EXPECT_EQ(t->link(links[2]).to_device, t->num_devices() - 4 + q) << q;
  }
  // ASTRA-sim's route (the aware model's) ignores the fabric: dimension 2's Switch.
  t->Route(1, 6, &links);
  EXPECT_EQ(links.size(), 6u);  // dimensions 0, 1 and 2, each through its per-rank Switch
  for (int l : links) EXPECT_FALSE(t->IsSpineLink(l));
}

// A message across pods is split over the 4 super-spines (ECMP, hash unknown): 4 sub-flows of
// 2,000 B, each crossing the core, delivered with the last one after the 6 links' latency.
TEST(ThreeTierTest, CrossPodMessageIsSplitOverTheCore) {
  Harness h(ThreeTier());
  h.Send(0, 4, 8000);
  // 4 sub-flows share host 0's link (1/4 each, their cap): 8,000 ns, then 222 ns of latency.
  EXPECT_EQ(h.Run(), std::vector<TimeNs>{8000 + 2 * 1 + 2 * 10 + 2 * 100});
  int core = 0;
  for (const LinkStats& l : h.model().link_stats()) {
    if (!h.topology().IsSuperLink(l.link)) continue;
    ++core;
    EXPECT_EQ(l.bytes, 2000u) << h.topology().LinkName(l.link);
    EXPECT_EQ(l.messages, 1u) << h.topology().LinkName(l.link);
  }
  EXPECT_EQ(core, 8);  // up from pod 0 and down into pod 1, through each super-spine
  // Within the pod, the core is never touched.
  Harness pod(ThreeTier());
  pod.Send(0, 2, 8000);
  EXPECT_EQ(pod.Run(), std::vector<TimeNs>{8000 + 2 * 1 + 2 * 10});
  for (const LinkStats& l : pod.model().link_stats()) {
    EXPECT_FALSE(pod.topology().IsSuperLink(l.link)) << pod.topology().LinkName(l.link);
  }
}

// network.yml spine_oversubscription R2 on the 2 x 2 x 2 fat-tree (leaf tier 1:1): the parser
// derives each spine-super-spine link as 2 leaves x 1 B/ns / (R2 x 2 per plane) = 1/R2 B/ns, and
// dimension 2 (ASTRA-sim's view) must be 1/R2. The 4 hosts of pod 0 each send 8,000 B to pod 1:
// they share 4/R2 B/ns of core uplinks, 8,000 R2 ns each; across leaves within the pod they
// take 8,000 ns (the leaf tier is non-blocking). The unaware model gives a lone cross-pod
// message dimension 2's per-rank share: 8,000 R2 ns too.
config::NetworkConfig SpineOversubscribed(double ratio) {
  char yml[640];
  std::snprintf(yml, sizeof yml,
                "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 2, 2, 2 ]\n"
                "bandwidth: [ %.17g, %.17g, %.17g ]\nlatency: [ 0, 0, 0 ]\ngoodput: 1\n"
                "message_overhead: 0\nspines: 2\nspine_latency: 0\noversubscription: 1\n"
                "super_spines: 4\nsuper_spine_latency: 0\nspine_oversubscription: %g\n",
                kOneBytePerNs, kOneBytePerNs, kOneBytePerNs / ratio, ratio);
  auto c = config::ParseNetworkConfig(yml, "three_tier.yml");
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return *c;
}

TEST(ThreeTierTest, SpineOversubscriptionSlowsCrossPodTrafficByTheRatio) {
  for (double ratio : {1.0, 2.0, 4.0}) {
    const config::NetworkConfig net = SpineOversubscribed(ratio);
    EXPECT_DOUBLE_EQ(net.leaf_spine.super_bandwidth_gbps, kOneBytePerNs / ratio);
    Harness across(net);
    for (int j = 0; j < 4; ++j) across.Send(j, 4 + j, 8000);
    const auto cross = static_cast<TimeNs>(8000 * ratio);
    EXPECT_EQ(across.Run(), std::vector<TimeNs>(4, cross)) << ratio << ":1";
    Harness within(net);
    for (int j = 0; j < 4; ++j) within.Send(j, j ^ 2, 8000);  // the other leaf of the pod
    EXPECT_EQ(within.Run(), std::vector<TimeNs>(4, 8000)) << ratio << ":1";
    auto t = Topology::Create(net);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(t->UnawareDelay(0, 4, 8000), cross) << ratio << ":1";
  }
}

// The aware and unaware models read the 3-tier file as ASTRA-sim reads it: the same delays as
// without the fabric keys.
TEST(ThreeTierTest, AstraSimModelsIgnoreTheFabric) {
  config::NetworkConfig flat = ThreeTier();
  flat.leaf_spine = {};
  auto a = Topology::Create(ThreeTier());
  auto b = Topology::Create(flat);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<int> ra, rb;
  for (int src = 0; src < 8; ++src) {
    for (int dst = 0; dst < 8; ++dst) {
      EXPECT_EQ(a->UnawareDelay(src, dst, 4096), b->UnawareDelay(src, dst, 4096));
      a->Route(src, dst, &ra);
      b->Route(src, dst, &rb);
      EXPECT_EQ(ra, rb) << src << " -> " << dst;
    }
  }
}

// The symmetry reduction on the fabric: rotating the hosts of a leaf (dimension 0) fixes every
// leaf and pod, so each fabric link stands for 2 copies of what its representative ranks send.
// With one spine at half the host rate, hosts 0 and 1 sending to leaf 1 at once share leaf 0's
// uplink (32,022 ns); folded, host 0 alone sends on it at half its capacity: the same time.
TEST(ThreeTierTest, FoldedFabricLinksShareTheirCapacityAmongTheirCopies) {
  config::NetworkConfig net = ThreeTier();
  net.leaf_spine.spines = 1;
  net.leaf_spine.super_spines = 2;
  net.leaf_spine.bandwidth_gbps = kOneBytePerNs / 2;
  Harness every(net);
  every.Send(0, 2, 8000);
  every.Send(1, 3, 8000);
  EXPECT_EQ(every.Run(), (std::vector<TimeNs>{32000 + 22, 32000 + 22}));

  Harness folded(net);
  std::vector<std::string> notes;
  auto fold = RankFold::Find(folded.topology(), 8, {{1, 2, "hosts"}}, &notes);
  ASSERT_TRUE(fold.ok()) << fold.status().ToString();
  EXPECT_EQ(fold->copies(), 2);
  auto links = fold->LinkFold(folded.topology());
  ASSERT_TRUE(links.ok()) << links.status().ToString();
  folded.Fold(*links);
  for (int id = 0; id < folded.topology().num_links(); ++id) {
    const bool fabric = folded.topology().IsSpineLink(id);
    if ((*links)[id] == id) {
      EXPECT_EQ(folded.topology().link_copies(id), fabric ? 2 : 1)
          << folded.topology().LinkName(id);
    }
    if (fabric) {
      EXPECT_EQ((*links)[id], id) << "a leaf's links are their own orbit";
    }
  }
  folded.Send(0, 2, 8000);
  EXPECT_EQ(folded.Run(), std::vector<TimeNs>{32000 + 22});
}

}  // namespace
}  // namespace genie::sim
