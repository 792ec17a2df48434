#include "genie/sim/topology.h"

#include <gtest/gtest.h>

namespace genie::sim {
namespace {

using config::NetworkConfig;
using config::TopologyKind;

NetworkConfig Net(std::vector<TopologyKind> kinds, std::vector<int> n) {
  NetworkConfig c;
  c.topology = kinds;
  c.npus_count = n;
  c.bandwidth_gbps.assign(kinds.size(), 50.0);
  c.latency_ns.assign(kinds.size(), 500.0);
  return c;
}

TEST(TopologyTest, MixedRadixAddressesDimZeroFastest) {
  auto t = Topology::Create(Net({TopologyKind::kRing, TopologyKind::kSwitch,
                                 TopologyKind::kFullyConnected}, {2, 8, 4}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->npus(), 64);
  EXPECT_EQ(t->Address(47), (std::vector<int>{1, 7, 2}));  // ASTRA-sim's worked example
  for (int r = 0; r < 64; ++r) EXPECT_EQ(t->RankOf(t->Address(r)), r);
  EXPECT_EQ(t->FirstDifferingDim(47, 47), -1);
  EXPECT_EQ(t->FirstDifferingDim(0, 1), 0);
  EXPECT_EQ(t->FirstDifferingDim(0, 2), 1);
  EXPECT_EQ(t->FirstDifferingDim(0, 16), 2);
  EXPECT_EQ(t->FirstDifferingDim(1, 18), 0);
}

TEST(TopologyTest, HopCounts) {
  auto t = Topology::Create(Net({TopologyKind::kRing, TopologyKind::kFullyConnected,
                                 TopologyKind::kSwitch}, {8, 4, 4}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->Hops(0, 0, 1), 1);
  EXPECT_EQ(t->Hops(0, 0, 3), 3);
  EXPECT_EQ(t->Hops(0, 0, 4), 4);
  EXPECT_EQ(t->Hops(0, 0, 5), 3);  // the shorter, anticlockwise way
  EXPECT_EQ(t->Hops(0, 6, 1), 3);
  EXPECT_EQ(t->Hops(1, 0, 3), 1);
  EXPECT_EQ(t->Hops(2, 3, 0), 2);
  EXPECT_EQ(t->Hops(2, 3, 3), 0);
}

TEST(TopologyTest, LinkAndDeviceCounts) {
  auto ring = Topology::Create(Net({TopologyKind::kRing}, {8}));
  EXPECT_EQ(ring->num_links(), 16);
  EXPECT_EQ(ring->num_devices(), 8);
  auto ring2 = Topology::Create(Net({TopologyKind::kRing}, {2}));
  EXPECT_EQ(ring2->num_links(), 2);  // one link each way
  auto sw = Topology::Create(Net({TopologyKind::kSwitch}, {8}));
  EXPECT_EQ(sw->num_links(), 16);
  EXPECT_EQ(sw->num_devices(), 9);
  auto fc = Topology::Create(Net({TopologyKind::kFullyConnected}, {4}));
  EXPECT_EQ(fc->num_links(), 12);
  auto two = Topology::Create(Net({TopologyKind::kSwitch, TopologyKind::kRing}, {4, 2}));
  EXPECT_EQ(two->num_links(), 2 * 8 + 4 * 2);
  EXPECT_EQ(two->num_devices(), 10);
}

// 2 leaves x 4 hosts and 2 spines: dimension 0 is the hosts of a leaf, dimension 1 the leaves.
NetworkConfig LeafSpine(int spines, std::vector<int> n = {4, 2}) {
  NetworkConfig c = Net(std::vector<TopologyKind>(n.size(), TopologyKind::kSwitch), n);
  c.leaf_spine.spines = spines;
  c.leaf_spine.bandwidth_gbps = 25;
  c.leaf_spine.latency_ns = 100;
  return c;
}

std::vector<std::string> Names(const Topology& t, const std::vector<int>& links) {
  std::vector<std::string> out;
  for (int l : links) out.push_back(t.LinkName(l));
  return out;
}

// Between leaves, one path per spine: host -> leaf -> spine s -> leaf -> host. Within a leaf,
// ASTRA-sim's route, no uplink. Route() (the aware and unaware models) never sees the spines.
TEST(TopologyTest, LeafSpineRoutesOverEverySpine) {
  auto t = Topology::Create(LeafSpine(2));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->leaf_spine());
  // 2 dims of Switch links (2 x 8 + 4 x 4) + 2 leaves x 2 spines x 2 directions.
  EXPECT_EQ(t->num_links(), 16 + 16 + 8);
  EXPECT_EQ(t->num_devices(), 8 + 2 + 4 + 2);
  EXPECT_EQ(t->FlowPaths(1, 6), 2);
  EXPECT_EQ(t->FlowPaths(1, 3), 1);
  std::vector<int> route;
  t->FlowRoute(1, 6, 1, &route);
  EXPECT_EQ(
      Names(*t, route),
      (std::vector<std::string>{"dim 0: npu 1 -> switch 8 (dim 0)", "spines: leaf 0 -> spine 1",
                                "spines: spine 1 -> leaf 1", "dim 0: switch 9 (dim 0) -> npu 6"}));
  EXPECT_EQ(t->link(route[1]).dim, 1);
  EXPECT_EQ(t->DeviceName(t->link(route[1]).to_device), "spine 1");
  EXPECT_EQ(t->DeviceName(t->link(route[1]).from_device), "switch 8 (dim 0)");
  EXPECT_EQ(t->link_bytes_per_ns(route[1]), 25.0 * (1 << 30) / 1e9);
  EXPECT_EQ(t->link_latency_ns(route[1]), 100);
  EXPECT_EQ(t->link_latency_ns(route[0]), 500);
  t->FlowRoute(1, 6, 0, &route);
  EXPECT_EQ(t->LinkName(route[1]), "spines: leaf 0 -> spine 0");
  // Intra-leaf: the leaf's switch only.
  t->FlowRoute(1, 3, 0, &route);
  EXPECT_EQ(Names(*t, route), (std::vector<std::string>{"dim 0: npu 1 -> switch 8 (dim 0)",
                                                        "dim 0: switch 8 (dim 0) -> npu 3"}));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      t->Route(a, b, &route);
      std::vector<int> plain;
      auto p = Topology::Create(Net({TopologyKind::kSwitch, TopologyKind::kSwitch}, {4, 2}));
      p->Route(a, b, &plain);
      EXPECT_EQ(route, plain) << a << " -> " << b;
      if (a / 4 == b / 4) {
        t->FlowRoute(a, b, 0, &route);
        for (int l : route) EXPECT_EQ(t->LinkName(l).find("spine"), std::string::npos);
      }
    }
  }
}

// With ranks per host as a third dimension (genie testbed network-yml), the leaf is still the
// coordinate on dimension 1: the fabric part reaches dst's host, then the host's own dimension.
TEST(TopologyTest, LeafSpineWithRanksPerHost) {
  auto t = Topology::Create(LeafSpine(1, {2, 2, 2}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  std::vector<int> route;
  t->FlowRoute(0, 7, 0, &route);  // (0,0,0) -> (1,1,1) via (1,1,0) = npu 3
  EXPECT_EQ(Names(*t, route),
            (std::vector<std::string>{
                "dim 0: npu 0 -> switch 8 (dim 0)", "spines: leaf 0 -> spine 0",
                "spines: spine 0 -> leaf 1", "dim 0: switch 9 (dim 0) -> npu 3",
                "dim 2: npu 3 -> switch 19 (dim 2)", "dim 2: switch 19 (dim 2) -> npu 7"}));
  // A rank of leaf 0 on its second host slot shares the same leaf uplinks.
  t->FlowRoute(5, 2, 0, &route);  // (1,0,1) -> (0,1,0)
  EXPECT_EQ(t->LinkName(route[1]), "spines: leaf 0 -> spine 0");
}

// Rail-optimized (leaf_dimension 1): [NVLink 2, rail 2, pod 2], rank = gpu + 2 (server +
// 2 pod). The leaves are dimension 1's switches, one per GPU index and pod (leaf gpu + 2 pod,
// devices 12-15); a message between pods first crosses NVLink to the GPU on the
// destination's rail (as NCCL's PXN does), then that rail's leaf, a spine, and the rail's leaf
// in the other pod. Within a pod nothing touches the spines; Route() (aware, unaware) is
// ASTRA-sim's three-dimension route as without the fabric.
TEST(TopologyTest, RailOptimizedLeavesArePerGpuIndexAndPod) {
  NetworkConfig c = LeafSpine(2, {2, 2, 2});
  c.leaf_spine.leaf_dimension = 1;
  auto t = Topology::Create(c);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // 3 dims x 4 groups x 4 links + 4 leaves x 2 spines x 2 directions.
  EXPECT_EQ(t->num_links(), 48 + 16);
  EXPECT_EQ(t->num_devices(), 8 + 12 + 2);
  std::vector<int> route;
  t->FlowRoute(0, 7, 0, &route);  // gpu 0 server 0 pod 0 -> gpu 1 server 1 pod 1
  EXPECT_EQ(Names(*t, route),
            (std::vector<std::string>{
                "dim 0: npu 0 -> switch 8 (dim 0)", "dim 0: switch 8 (dim 0) -> npu 1",
                "dim 1: npu 1 -> switch 13 (dim 1)", "spines: leaf 1 -> spine 0",
                "spines: spine 0 -> leaf 3", "dim 1: switch 15 (dim 1) -> npu 7"}));
  EXPECT_EQ(t->DeviceName(t->link(route[3]).from_device), "switch 13 (dim 1)");
  EXPECT_EQ(t->link(route[3]).dim, 2);
  EXPECT_EQ(t->link_dim(route[3]), 2);
  EXPECT_EQ(t->FlowPaths(0, 7), 2);
  t->FlowRoute(0, 4, 1, &route);  // same rail, other pod: no NVLink hop
  EXPECT_EQ(Names(*t, route),
            (std::vector<std::string>{
                "dim 1: npu 0 -> switch 12 (dim 1)", "spines: leaf 0 -> spine 1",
                "spines: spine 1 -> leaf 2", "dim 1: switch 14 (dim 1) -> npu 4"}));
  // Within a pod, across rails and servers: NVLink then the rail's leaf, one path.
  EXPECT_EQ(t->FlowPaths(0, 3), 1);
  t->FlowRoute(0, 3, 0, &route);
  EXPECT_EQ(Names(*t, route),
            (std::vector<std::string>{
                "dim 0: npu 0 -> switch 8 (dim 0)", "dim 0: switch 8 (dim 0) -> npu 1",
                "dim 1: npu 1 -> switch 13 (dim 1)", "dim 1: switch 13 (dim 1) -> npu 3"}));
  // A leaf's spine links are its rail's in its pod: gpu 1 of server 1, pod 1 is on leaf 3.
  t->LeafSpineLinks(7, &route);
  EXPECT_EQ(Names(*t, route), (std::vector<std::string>{
                                  "spines: leaf 3 -> spine 0", "spines: spine 0 -> leaf 3",
                                  "spines: leaf 3 -> spine 1", "spines: spine 1 -> leaf 3"}));
  auto plain = Topology::Create(Net(std::vector<TopologyKind>(3, TopologyKind::kSwitch), {2, 2, 2}));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      std::vector<int> p;
      t->Route(a, b, &route);
      plain->Route(a, b, &p);
      EXPECT_EQ(route, p) << a << " -> " << b;
    }
  }
  // Out of range, or not Switch, or with the testbed's ecmp_routes: refused.
  c.leaf_spine.leaf_dimension = 2;
  EXPECT_FALSE(Topology::Create(c).ok());
  c.leaf_spine.leaf_dimension = 1;
  c.topology[1] = TopologyKind::kRing;
  EXPECT_FALSE(Topology::Create(c).ok());
  c.topology[1] = TopologyKind::kSwitch;
  c.topology[0] = TopologyKind::kRing;  // NVLink as a ring: fine, it is below the leaves
  EXPECT_TRUE(Topology::Create(c).ok());
  c.leaf_spine.routes = {{0, 4, 0}};
  EXPECT_FALSE(Topology::Create(c).ok());
}

TEST(TopologyTest, SwitchRouteGoesThroughTheSwitch) {
  auto t = Topology::Create(Net({TopologyKind::kSwitch}, {8}));
  std::vector<int> route;
  t->Route(3, 6, &route);
  ASSERT_EQ(route.size(), 2u);
  EXPECT_EQ(t->LinkName(route[0]), "dim 0: npu 3 -> switch 8 (dim 0)");
  EXPECT_EQ(t->LinkName(route[1]), "dim 0: switch 8 (dim 0) -> npu 6");
}

TEST(TopologyTest, RingRouteTakesTheShorterDirection) {
  auto t = Topology::Create(Net({TopologyKind::kRing}, {8}));
  std::vector<int> route;
  t->Route(0, 5, &route);
  ASSERT_EQ(route.size(), 3u);
  EXPECT_EQ(t->LinkName(route[0]), "dim 0: npu 0 -> npu 7");
  EXPECT_EQ(t->LinkName(route[2]), "dim 0: npu 6 -> npu 5");
  t->Route(0, 4, &route);  // a tie goes clockwise
  ASSERT_EQ(route.size(), 4u);
  EXPECT_EQ(t->LinkName(route[0]), "dim 0: npu 0 -> npu 1");
}

// Every route of a mixed 3-D topology is a connected walk from src to dst whose length is the
// sum of the per-dimension hop counts.
TEST(TopologyTest, EveryRouteIsAConnectedShortestWalk) {
  auto t = Topology::Create(Net({TopologyKind::kRing, TopologyKind::kSwitch,
                                 TopologyKind::kFullyConnected}, {5, 3, 4}));
  ASSERT_TRUE(t.ok());
  std::vector<int> route;
  for (int s = 0; s < t->npus(); ++s) {
    for (int d = 0; d < t->npus(); ++d) {
      t->Route(s, d, &route);
      int hops = 0;
      for (int dim = 0; dim < t->dims(); ++dim) {
        hops += t->Hops(dim, t->Coordinate(s, dim), t->Coordinate(d, dim));
      }
      ASSERT_EQ(static_cast<int>(route.size()), hops) << s << "->" << d;
      int at = s;
      int prev_dim = 0;
      for (int id : route) {
        Topology::LinkInfo l = t->link(id);
        ASSERT_EQ(l.from_device, at) << s << "->" << d;
        ASSERT_GE(l.dim, prev_dim);  // dimension by dimension, from dim 0 up
        prev_dim = l.dim;
        at = l.to_device;
      }
      ASSERT_EQ(at, d);
    }
  }
}

TEST(TopologyTest, UnawareDelayUsesFirstDifferingDimension) {
  NetworkConfig c = Net({TopologyKind::kRing, TopologyKind::kSwitch}, {8, 2});
  c.bandwidth_gbps = {50.0, 400.0};
  c.latency_ns = {500.0, 936.25};
  auto t = Topology::Create(c);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->UnawareDelay(0, 1, 32768), 1110);   // floor(500 + 610.35)
  EXPECT_EQ(t->UnawareDelay(0, 3, 32768), 2110);   // floor(3*500 + 610.35)
  EXPECT_EQ(t->UnawareDelay(0, 8, 32768), 1948);   // dim 1: floor(2*936.25 + 76.29)
  EXPECT_EQ(t->UnawareDelay(1, 8, 32768), 1110);   // differs in dim 0 first: only dim 0 counts
  EXPECT_EQ(t->UnawareDelay(4, 4, 32768), 0);
  EXPECT_EQ(t->UnawareDelay(0, 1, 0), 500);
  EXPECT_EQ(t->bytes_per_ns(0), 50.0 * 1073741824.0 / 1e9);
}

TEST(TopologyTest, InvalidConfigIsAnError) {
  NetworkConfig c = Net({TopologyKind::kRing}, {8});
  c.latency_ns.clear();
  EXPECT_FALSE(Topology::Create(c).ok());
}

// Found by running an edge input through fuzz/astra_config_fuzz: a fully connected block of 65,536 NPUs (a valid network.yml)
// has 2^32 - 2^16 links, and n(n-1) overflowed int: the count wrapped negative and passed the
// 2^30 limit.
TEST(TopologyTest, FullyConnectedLinkCountIsCheckedWithoutWrapping) {
  NetworkConfig big = Net({TopologyKind::kFullyConnected}, {65536});
  big.path = "net.yml";
  auto t = Topology::Create(big);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("net.yml: the topology has more than 2^30 links"),
            std::string::npos)
      << t.status().message();
  auto fits = Topology::Create(Net({TopologyKind::kFullyConnected}, {32768}));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(fits->num_links(), 32768 * 32767);
}

}  // namespace
}  // namespace genie::sim
