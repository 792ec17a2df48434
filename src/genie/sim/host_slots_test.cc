// Host slots: ranks of several jobs on one host share the host's links.
#include "genie/sim/host_slots.h"

#include <gtest/gtest.h>

namespace genie::sim {
namespace {

config::NetworkConfig Star(int hosts) {
  config::NetworkConfig c;
  c.topology = {config::TopologyKind::kSwitch};
  c.npus_count = {hosts};
  c.bandwidth_gbps = {1.0};
  c.latency_ns = {1000};
  c.goodput = {0.9};
  return c;
}

TEST(HostSlots, OneSlotIsTheHostsNetworkItself) {
  const config::NetworkConfig c = WithHostSlots(Star(4), 1);
  EXPECT_EQ(c.npus_count, std::vector<int>({4}));
  EXPECT_EQ(c.goodput, std::vector<double>({0.9}));
}

TEST(HostSlots, SlotsAreALoopbackDimensionAboveTheHosts) {
  const config::NetworkConfig c = WithHostSlots(Star(4), 3);
  ASSERT_TRUE(config::ValidateNetworkConfig(c).ok());
  EXPECT_EQ(c.npus_count, std::vector<int>({4, 3}));
  EXPECT_EQ(c.bandwidth_gbps, std::vector<double>({1.0, config::kHostLoopbackGbps}));
  EXPECT_EQ(c.goodput, std::vector<double>({0.9, config::kHostLoopbackGoodput}));
  EXPECT_EQ(c.loopback_dimension, 1);
  EXPECT_EQ(WithHostSlots(Star(4), 1).loopback_dimension, -1);
  // The hosts' machine is kept for the slots.
  config::NetworkConfig shared = Star(4);
  shared.machine_gbps = 4.0;
  EXPECT_EQ(WithHostSlots(shared, 2).machine_gbps, 4.0);
}

TEST(HostSlots, EverySlotOfAHostSendsOnTheHostsLinks) {
  auto t = Topology::Create(WithHostSlots(Star(4), 2));
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<int> host0, slot1;
  t->Route(1, 2, &host0);  // host 1 -> host 2, slot 0
  t->Route(5, 6, &slot1);  // the same hosts, slot 1
  ASSERT_EQ(host0.size(), 2u);
  EXPECT_NE(host0, slot1);  // unfolded: links of their own
  t->set_link_fold(HostSlotLinkFold(*t, 4), /*copies=*/false);
  t->Route(5, 6, &slot1);
  EXPECT_EQ(host0, slot1);
  // Across slots: the hosts' links, then host 2's loopback (not folded).
  std::vector<int> across;
  t->Route(1, 6, &across);
  ASSERT_EQ(across.size(), 4u);
  EXPECT_EQ(across[0], host0[0]);
  EXPECT_EQ(across[1], host0[1]);
  EXPECT_EQ(t->link(across[2]).dim, 1);
}

TEST(HostSlots, ALeafSpineRouteUsesTheHostsLinksAndTheSameSpines) {
  config::NetworkConfig c;
  c.topology = {config::TopologyKind::kSwitch, config::TopologyKind::kSwitch};
  c.npus_count = {2, 2};  // 2 hosts per leaf, 2 leaves
  c.bandwidth_gbps = {1.0, 1.0};
  c.latency_ns = {1000, 1000};
  c.leaf_spine.spines = 2;
  c.leaf_spine.bandwidth_gbps = 1.0;
  c.leaf_spine.latency_ns = 1000;
  auto t = Topology::Create(WithHostSlots(c, 2));
  ASSERT_TRUE(t.ok()) << t.status().message();
  t->set_link_fold(HostSlotLinkFold(*t, 4), /*copies=*/false);
  std::vector<int> host0, slot1;
  t->FlowRoute(0, 3, 1, &host0);  // host 0 (leaf 0) -> host 3 (leaf 1), spine 1
  t->FlowRoute(4, 7, 1, &slot1);  // their slot 1
  EXPECT_EQ(host0, slot1);
  // A spine link is one link, not copies of one (the symmetry reduction's meaning of a fold).
  for (int l : host0) EXPECT_EQ(t->link_copies(l), 1) << t->LinkName(l);
}

}  // namespace
}  // namespace genie::sim
