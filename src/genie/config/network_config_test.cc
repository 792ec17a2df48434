#include "genie/config/network_config.h"

#include <gtest/gtest.h>

#include <tuple>

namespace genie::config {
namespace {

const std::string kDir = std::string(GENIE_DATA_DIR) + "/astra-sim-configs/";

TEST(NetworkConfigTest, RingFiles) {
  for (int n : {4, 8, 16}) {
    std::string path = kDir + "Ring_" + std::to_string(n) + "npus.yml";
    auto c = LoadNetworkConfig(path);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(c->topology, std::vector<TopologyKind>{TopologyKind::kRing});
    EXPECT_EQ(c->npus_count, std::vector<int>{n});
    EXPECT_EQ(c->bandwidth_gbps, std::vector<double>{50.0});
    EXPECT_EQ(c->latency_ns, std::vector<double>{500.0});
    EXPECT_EQ(c->total_npus(), n);
    EXPECT_EQ(c->path, path);
  }
}

TEST(NetworkConfigTest, HgxSwitch) {
  auto c = LoadNetworkConfig(kDir + "HGX-H100-validated.yml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->topology, std::vector<TopologyKind>{TopologyKind::kSwitch});
  EXPECT_EQ(c->npus_count, std::vector<int>{8});
  EXPECT_EQ(c->bandwidth_gbps, std::vector<double>{400.0});
  EXPECT_EQ(c->latency_ns, std::vector<double>{936.25});
  nlohmann::json j = c->ToJson();
  EXPECT_EQ(j["topology"], nlohmann::json::array({"Switch"}));
  EXPECT_EQ(j["latency"][0], 936.25);
  EXPECT_EQ(j["total_npus"], 8);
}

TEST(NetworkConfigTest, MultiDimensional) {
  auto c = ParseNetworkConfig(
      "topology: [ Ring, FullyConnected, Switch ]\nnpus_count: [ 2, 4, 8 ]\n"
      "bandwidth: [ 200, 100, 50.5 ]\nlatency: [ 10, 20, 30 ]\n",
      "3d.yml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->dims(), 3);
  EXPECT_EQ(c->total_npus(), 64);
  EXPECT_EQ(c->topology[1], TopologyKind::kFullyConnected);
  EXPECT_EQ(c->bandwidth_gbps[2], 50.5);
}

// genie's own keys for the flow model: absent = the documented defaults; a single value is
// every dimension's; out-of-range values name the key.
TEST(NetworkConfigTest, FlowModelKeys) {
  const std::string base =
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 1, 1 ]\n"
      "latency: [ 1, 1 ]\n";
  auto plain = ParseNetworkConfig(base, "p.yml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->GoodputOf(1), kDefaultGoodput);
  EXPECT_EQ(plain->MessageOverheadNsOf(0), kDefaultMessageOverheadNs);
  EXPECT_EQ(plain->ToJson()["goodput"], nlohmann::json::array({0.94, 0.94}));

  auto one = ParseNetworkConfig(base + "goodput: 0.9\nmessage_overhead: [ 2000 ]\n", "o.yml");
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->GoodputOf(0), 0.9);
  EXPECT_EQ(one->GoodputOf(1), 0.9);
  EXPECT_EQ(one->MessageOverheadNsOf(1), 2000);

  auto each = ParseNetworkConfig(base + "goodput: [ 1, 0.5 ]\nmessage_overhead: [ 0, 7 ]\n", "e");
  ASSERT_TRUE(each.ok()) << each.status().ToString();
  EXPECT_EQ(each->GoodputOf(1), 0.5);
  EXPECT_EQ(each->MessageOverheadNsOf(0), 0);

  for (const char* bad : {"goodput: 0\n", "goodput: 1.5\n", "goodput: [ 1, 1, 1 ]\n",
                          "message_overhead: -1\n", "goodput: fast\n"}) {
    auto r = ParseNetworkConfig(base + bad, "b.yml");
    ASSERT_FALSE(r.ok()) << bad;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml"), std::string::npos) << m;
    const bool names_key = m.find("goodput") != std::string::npos ||
                           m.find("message_overhead") != std::string::npos;
    EXPECT_TRUE(names_key) << m;
  }
}

// bbr's PROBE_RTT (flow model only): read and recorded; a duration not under the interval, a
// missing or unknown key or a rate out of range is refused naming the file and the key.
TEST(NetworkConfigTest, ProbeRttKey) {
  const std::string base =
      "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n";
  auto plain = ParseNetworkConfig(base, "p.yml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->probe_rtt.interval_ns, 0);
  EXPECT_FALSE(plain->ToJson().contains("probe_rtt"));
  auto set = ParseNetworkConfig(
      base + "probe_rtt: {interval: 10000000000, duration: 200000000, bandwidth: 0.015}\n",
      "s.yml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->ignored_keys.empty());
  EXPECT_EQ(set->probe_rtt.interval_ns, 1e10);
  EXPECT_EQ(set->probe_rtt.duration_ns, 2e8);
  EXPECT_EQ(set->probe_rtt.gbps, 0.015);
  EXPECT_EQ(set->ToJson()["probe_rtt"]["duration"], 2e8);
  for (const char* bad :
       {"probe_rtt: {interval: 100, duration: 200, bandwidth: 1}\n",
        "probe_rtt: {interval: 1e10, duration: 2e8}\n",
        "probe_rtt: {interval: 1e10, duration: 2e8, bandwidth: 1, cwnd: 4}\n",
        "probe_rtt: {interval: 1e10, duration: 2e8, bandwidth: -1}\n", "probe_rtt: 3\n"}) {
    auto r = ParseNetworkConfig(base + bad, "b.yml");
    ASSERT_FALSE(r.ok()) << bad;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml"), std::string::npos) << m;
    EXPECT_NE(m.find("probe_rtt"), std::string::npos) << m;
  }
}

// A testbed's loopbacks and machine (flow model only): the per-host dimension and what the
// machine's cores move in all, read and recorded; a dimension that is not one above 0, or a
// rate out of range, is refused naming the file and the key.
TEST(NetworkConfigTest, LoopbackKeys) {
  const std::string base =
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 1, 2 ]\n"
      "latency: [ 1, 1 ]\n";
  auto plain = ParseNetworkConfig(base, "p.yml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->loopback_dimension, -1);
  EXPECT_EQ(plain->machine_gbps, 0);
  EXPECT_FALSE(plain->ToJson().contains("loopback_dimension"));
  auto set = ParseNetworkConfig(base + "loopback_dimension: 1\nmachine_bandwidth: 4\n",
                                "s.yml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_TRUE(set->ignored_keys.empty());
  EXPECT_EQ(set->loopback_dimension, 1);
  EXPECT_EQ(set->machine_gbps, 4);
  EXPECT_EQ(set->ToJson()["loopback_dimension"], 1);
  EXPECT_EQ(set->ToJson()["machine_bandwidth"], 4.0);
  for (const char* bad : {"loopback_dimension: 0\n", "loopback_dimension: 2\n",
                          "machine_bandwidth: -1\n", "machine_bandwidth: x\n"}) {
    auto r = ParseNetworkConfig(base + bad, "b.yml");
    ASSERT_FALSE(r.ok()) << bad;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml"), std::string::npos) << m;
    EXPECT_NE(m.find(std::string(bad).substr(0, std::string(bad).find(':'))), std::string::npos)
        << m;
  }
  // On a leaf-spine, the fabric's dimensions are no host's loopback.
  const std::string fabric =
      "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 4, 2, 2 ]\nbandwidth: [ 1, 1, 2 ]\n"
      "latency: [ 1, 1, 1 ]\nspines: 2\nspine_bandwidth: 1\nspine_latency: 1\n";
  ASSERT_TRUE(ParseNetworkConfig(fabric + "loopback_dimension: 2\n", "ok.yml").ok());
  auto leaves = ParseNetworkConfig(fabric + "loopback_dimension: 1\n", "l.yml");
  ASSERT_FALSE(leaves.ok());
  EXPECT_NE(leaves.status().message().find("leaf-spine fabric"), std::string::npos)
      << leaves.status().message();
}

// The leaf-spine keys (flow model only): read, recorded, and checked with errors naming the
// file and the key; without them the file reads as before.
TEST(NetworkConfigTest, LeafSpineKeys) {
  const std::string base =
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 1, 1 ]\n"
      "latency: [ 1, 1 ]\n";
  auto plain = ParseNetworkConfig(base, "p.yml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_FALSE(plain->leaf_spine.present());
  EXPECT_FALSE(plain->ToJson().contains("spines"));

  auto ls = ParseNetworkConfig(
      base + "spines: 2\nspine_bandwidth: 0.5\nspine_latency: 30\necmp: split\n", "ls.yml");
  ASSERT_TRUE(ls.ok()) << ls.status().ToString();
  EXPECT_EQ(ls->leaf_spine.spines, 2);
  EXPECT_EQ(ls->leaf_spine.bandwidth_gbps, 0.5);
  EXPECT_EQ(ls->leaf_spine.latency_ns, 30);
  EXPECT_TRUE(ls->ignored_keys.empty());
  EXPECT_EQ(ls->ToJson()["spines"], 2);
  EXPECT_EQ(ls->ToJson()["ecmp"], "split");
  // ASTRA-sim's keys read the same.
  EXPECT_EQ(ls->npus_count, plain->npus_count);
  EXPECT_EQ(ls->bandwidth_gbps, plain->bandwidth_gbps);
  EXPECT_TRUE(ls->leaf_spine.routes.empty());
  EXPECT_FALSE(ls->ToJson().contains("ecmp_routes"));

  // Known spines per pair of hosts (host = rank mod 8 here), one entry per direction.
  auto known = ParseNetworkConfig(base + "spines: 2\nspine_bandwidth: 0.5\nspine_latency: 30\n"
                                         "ecmp_routes: [ [0, 4, 1], [4, 0, 0] ]\n",
                                  "k.yml");
  ASSERT_TRUE(known.ok()) << known.status().ToString();
  EXPECT_EQ(known->leaf_spine.routes, (std::vector<EcmpRoute>{{0, 4, 1}, {4, 0, 0}}));
  EXPECT_EQ(known->ToJson()["ecmp_routes"], nlohmann::json::parse("[[0,4,1],[4,0,0]]"));
  EXPECT_TRUE(known->ignored_keys.empty());
  // Known spines per connection (NPUs and channel: ports hashed too).
  auto conns = ParseNetworkConfig(base + "spines: 2\nspine_bandwidth: 0.5\nspine_latency: 30\n"
                                         "ecmp_connections: [ [0, 4, 1, 1], [4, 0, 1, 0] ]\n",
                                  "c.yml");
  ASSERT_TRUE(conns.ok()) << conns.status().ToString();
  EXPECT_EQ(conns->leaf_spine.connections,
            (std::vector<EcmpConnection>{{0, 4, 1, 1}, {4, 0, 1, 0}}));
  EXPECT_EQ(conns->ToJson()["ecmp_connections"], nlohmann::json::parse("[[0,4,1,1],[4,0,1,0]]"));
  EXPECT_TRUE(conns->ignored_keys.empty());

  // A calibration's measured message times (the flow model's, ASTRA-sim ignores them).
  auto timed =
      ParseNetworkConfig(base + "message_times: [ [8192, 90000], [65536, 560000] ]\n", "t.yml");
  ASSERT_TRUE(timed.ok()) << timed.status().ToString();
  EXPECT_EQ(timed->message_times,
            (std::vector<std::pair<double, double>>{{8192, 90000}, {65536, 560000}}));
  EXPECT_EQ(timed->ToJson()["message_times"],
            nlohmann::json::parse("[[8192,90000],[65536,560000]]"));
  EXPECT_TRUE(timed->ignored_keys.empty());

  // A shaper's bucket per link and the floor of each size with it full (flow model only).
  auto shaped = ParseNetworkConfig(
      base + "burst: [ 131072, 0 ]\nburst_message_times: [ [8192, 100000], [65536, 200000] ]\n",
      "s.yml");
  ASSERT_TRUE(shaped.ok()) << shaped.status().ToString();
  EXPECT_DOUBLE_EQ(shaped->BurstBytesOf(0), 131072);
  EXPECT_DOUBLE_EQ(shaped->BurstBytesOf(1), 0);
  EXPECT_EQ(shaped->burst_message_times,
            (std::vector<std::pair<double, double>>{{8192, 100000}, {65536, 200000}}));
  EXPECT_EQ(shaped->ToJson()["burst"], nlohmann::json::parse("[131072, 0]"));
  EXPECT_TRUE(shaped->ignored_keys.empty());
  EXPECT_DOUBLE_EQ(timed->BurstBytesOf(0), 0);  // none given: no shaper

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_routes: [ [0, 4] ]\n",
       "ecmp_routes"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_routes: [ [0, 1, 0] ]\n",
       "ecmp_routes"},  // one leaf: no spine between them
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_routes: [ [0, 4, 2] ]\n",
       "ecmp_routes"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_routes: [ [0, 8, 0] ]\n",
       "ecmp_routes"},
      {"ecmp_routes: [ [0, 4, 0] ]\n", "ecmp_routes"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_connections: [ [0, 4, 0] ]\n",
       "ecmp_connections"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_connections: [ [0, 1, 0, 0] ]\n",
       "ecmp_connections"},  // one leaf
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp_connections: [ [0, 4, -1, 0] ]\n",
       "ecmp_connections"},
      {"ecmp_connections: [ [0, 4, 0, 0] ]\n", "ecmp_connections"},
      {"spines: 2\nspine_latency: 1\n", "spine_bandwidth"},
      {"spines: 2\nspine_bandwidth: 1\n", "spine_latency"},
      {"spine_bandwidth: 1\n", "spine_bandwidth"},  // names the missing "spines" too
      {"spines: 0\nspine_bandwidth: 1\nspine_latency: 1\n", "spines"},
      {"spines: [ 1, 2 ]\nspine_bandwidth: 1\nspine_latency: 1\n", "spines"},
      {"spines: 2\nspine_bandwidth: 0\nspine_latency: 1\n", "spine_bandwidth"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: -1\n", "spine_latency"},
      {"spines: 2\nspine_bandwidth: 1\nspine_latency: 1\necmp: hash\n", "ecmp"},
      {"message_times: [ [8192, 1000], [4096, 2000] ]\n", "message_times"},  // not increasing
      {"message_times: [ [8192, 0] ]\n", "message_times"},
      {"message_times: [ 8192, 1000 ]\n", "message_times"},
      {"burst: [ -1 ]\n", "burst"},
      {"burst: [ 1, 2, 3 ]\n", "burst"},  // two dimensions
      {"burst_message_times: [ [8192, 1000], [8192, 2000] ]\n", "burst_message_times"},
      {"burst_message_times: 5\n", "burst_message_times"},
  };
  for (const auto& [keys, key] : bad) {
    auto r = ParseNetworkConfig(base + keys, "b.yml");
    ASSERT_FALSE(r.ok()) << keys;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml: key \"" + key + "\""), std::string::npos) << m;
  }
  auto ring = ParseNetworkConfig(
      "topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 1, 1 ]\n"
      "latency: [ 1, 1 ]\nspines: 1\nspine_bandwidth: 1\nspine_latency: 1\n",
      "r.yml");
  ASSERT_FALSE(ring.ok());
  EXPECT_NE(ring.status().message().find("Switch"), std::string::npos) << ring.status().message();
}

// `oversubscription` R sizes the leaves' uplinks: 4 hosts at 2 GB/s per leaf, 2 spines, 4:1
// gives 4 x 2 / (4 x 2) = 1 GB/s per leaf-spine link, derived when spine_bandwidth is absent
// and checked against it when given; dimension 1 (ASTRA-sim's per-rank view) must be 2 / 4.
TEST(NetworkConfigTest, Oversubscription) {
  const std::string base =
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 2, 0.5 ]\n"
      "latency: [ 1, 1 ]\nspines: 2\nspine_latency: 30\n";
  auto derived = ParseNetworkConfig(base + "oversubscription: 4\n", "o.yml");
  ASSERT_TRUE(derived.ok()) << derived.status().ToString();
  EXPECT_DOUBLE_EQ(derived->leaf_spine.bandwidth_gbps, 1.0);
  EXPECT_DOUBLE_EQ(derived->leaf_spine.oversubscription, 4.0);
  EXPECT_TRUE(derived->ignored_keys.empty());
  EXPECT_EQ(derived->ToJson()["oversubscription"], 4.0);
  EXPECT_EQ(derived->ToJson()["spine_bandwidth"], 1.0);
  // Both given and agreeing (to a written decimal's precision): accepted as written.
  auto both = ParseNetworkConfig(base + "oversubscription: 4\nspine_bandwidth: 1.000001\n",
                                 "o.yml");
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_DOUBLE_EQ(both->leaf_spine.bandwidth_gbps, 1.000001);
  // Without the key nothing changes, and the JSON does not mention it.
  auto plain = ParseNetworkConfig(base + "spine_bandwidth: 1\n", "o.yml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(plain->leaf_spine.oversubscription, 0);
  EXPECT_FALSE(plain->ToJson().contains("oversubscription"));

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"oversubscription: 0\n", "oversubscription"},
      {"oversubscription: -2\n", "oversubscription"},
      {"oversubscription: .nan\n", "oversubscription"},
      {"oversubscription: 1e7\n", "oversubscription"},
      {"oversubscription: [ 4 ]\n", "oversubscription"},
      {"oversubscription: four\n", "oversubscription"},
      {"oversubscription: 4\nspine_bandwidth: 2\n", "spine_bandwidth"},  // that is 2:1
      {"oversubscription: 2\n", "bandwidth"},  // dimension 1 would be 1, not 0.5
  };
  for (const auto& [keys, key] : bad) {
    auto r = ParseNetworkConfig(base + keys, "b.yml");
    ASSERT_FALSE(r.ok()) << keys;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml: key \"" + key + "\""), std::string::npos) << keys << ": " << m;
  }
  // Without spines: refused naming the key and the missing "spines".
  auto alone = ParseNetworkConfig(
      "topology: [ Switch, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 2, 0.5 ]\n"
      "latency: [ 1, 1 ]\noversubscription: 4\n",
      "a.yml");
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("a.yml: key \"oversubscription\""), std::string::npos);
  EXPECT_NE(alone.status().message().find("spines"), std::string::npos);
  // Built in code: validation holds the same rules.
  NetworkConfig c = *derived;
  c.leaf_spine.oversubscription = 8;
  EXPECT_FALSE(ValidateNetworkConfig(c).ok());
  c.leaf_spine = {};
  c.leaf_spine.oversubscription = 4;
  EXPECT_FALSE(ValidateNetworkConfig(c).ok());
}

// A third tier: 2 hosts x 4 leaves x 3 pods, leaves at 4:1 over 2 spines per pod (each leaf
// uplink 2 x 2 / (4 x 2) = 0.5 GB/s), 4 super-spines (2 per plane) at spine_oversubscription 2:
// each spine-super-spine link 4 leaves x 0.5 / (2 x 2) = 0.5 GB/s, derived or checked; dimension
// 2 (ASTRA-sim's per-rank view) must be 0.5 / 2.
TEST(NetworkConfigTest, ThirdTier) {
  const std::string base =
      "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 2, 4, 3 ]\n"
      "bandwidth: [ 2, 0.5, 0.25 ]\nlatency: [ 1, 1, 1 ]\nspines: 2\nspine_latency: 30\n"
      "oversubscription: 4\nsuper_spines: 4\nsuper_spine_latency: 50\n";
  auto derived = ParseNetworkConfig(base + "spine_oversubscription: 2\n", "t.yml");
  ASSERT_TRUE(derived.ok()) << derived.status().ToString();
  EXPECT_TRUE(derived->leaf_spine.three_tier());
  EXPECT_DOUBLE_EQ(derived->leaf_spine.super_bandwidth_gbps, 0.5);
  EXPECT_DOUBLE_EQ(derived->leaf_spine.super_latency_ns, 50);
  EXPECT_TRUE(derived->ignored_keys.empty());
  const nlohmann::json j = derived->ToJson();
  EXPECT_EQ(j["super_spines"], 4);
  EXPECT_EQ(j["super_spine_bandwidth"], 0.5);
  EXPECT_EQ(j["spine_oversubscription"], 2.0);
  auto given = ParseNetworkConfig(base + "super_spine_bandwidth: 0.5\n", "t.yml");
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_FALSE(given->ToJson().contains("spine_oversubscription"));

  const std::vector<std::pair<std::string, std::string>> bad = {
      {"spine_oversubscription: 0\n", "spine_oversubscription"},
      {"spine_oversubscription: -1\n", "spine_oversubscription"},
      {"spine_oversubscription: 2\nsuper_spine_bandwidth: 1\n", "super_spine_bandwidth"},
      {"spine_oversubscription: 4\n", "bandwidth"},  // dimension 2 would be 0.125
      {"super_spine_bandwidth: 1e300\n", "super_spine_bandwidth"},
  };
  for (const auto& [keys, key] : bad) {
    auto r = ParseNetworkConfig(base + keys, "b.yml");
    ASSERT_FALSE(r.ok()) << keys;
    const std::string& m = r.status().message();
    EXPECT_NE(m.find("b.yml: key \"" + key + "\""), std::string::npos) << keys << ": " << m;
  }
  // The super-spines come in one plane per spine of a pod.
  std::string odd = base;
  odd.replace(odd.find("super_spines: 4"), 15, "super_spines: 3");
  auto planes = ParseNetworkConfig(odd + "super_spine_bandwidth: 1\n", "p.yml");
  ASSERT_FALSE(planes.ok());
  EXPECT_NE(planes.status().message().find("3 is not a multiple of spines (2, per pod)"),
            std::string::npos)
      << planes.status().message();
  // Without a Switch dimension for the pods.
  auto two = ParseNetworkConfig(
      "topology: [ Switch, Switch ]\nnpus_count: [ 2, 4 ]\nbandwidth: [ 2, 0.5 ]\n"
      "latency: [ 1, 1 ]\nspines: 2\nspine_latency: 30\nspine_bandwidth: 1\nsuper_spines: 4\n"
      "super_spine_latency: 1\nsuper_spine_bandwidth: 1\n",
      "d.yml");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("needs dimension 2 (the pods"), std::string::npos)
      << two.status().message();
  // The third tier's keys without super_spines, and without spines.
  auto lone = ParseNetworkConfig(base.substr(0, base.find("super_spines")) +
                                     "spine_oversubscription: 2\n",
                                 "l.yml");
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.status().message().find("l.yml: key \"spine_oversubscription\" describes a "
                                         "third tier but \"super_spines\" is missing"),
            std::string::npos)
      << lone.status().message();
  auto bare = ParseNetworkConfig(
      "topology: [ Switch, Switch, Switch ]\nnpus_count: [ 2, 4, 3 ]\n"
      "bandwidth: [ 2, 0.5, 0.25 ]\nlatency: [ 1, 1, 1 ]\nsuper_spines: 4\n",
      "s.yml");
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.status().message().find("\"spines\" is missing"), std::string::npos);
  // Built in code: validation holds the same rules.
  NetworkConfig c = *derived;
  c.leaf_spine.super_spines = 6;
  EXPECT_FALSE(ValidateNetworkConfig(c).ok());  // 0.5 GB/s is not 4 x 0.5 / (2 x 3)
  c = *derived;
  c.leaf_spine.spine_oversubscription = 0;
  c.leaf_spine.super_spines = 3;
  EXPECT_FALSE(ValidateNetworkConfig(c).ok());
}

TEST(NetworkConfigTest, ErrorsNameFileAndKey) {
  auto unknown = ParseNetworkConfig(
      "topology: [ Torus ]\nnpus_count: [ 8 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n", "n.yml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("n.yml"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("Torus"), std::string::npos);

  auto mismatch = ParseNetworkConfig(
      "topology: [ Ring, Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n",
      "m.yml");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(mismatch.status().message().find("npus_count"), std::string::npos);

  EXPECT_FALSE(ParseNetworkConfig(
                   "topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n", "x")
                   .ok());
  EXPECT_FALSE(ParseNetworkConfig(
                   "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 0 ]\nlatency: [ 1 ]\n", "x")
                   .ok());
  EXPECT_FALSE(ParseNetworkConfig(
                   "topology: [ Ring ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ -1 ]\n", "x")
                   .ok());
  EXPECT_FALSE(ParseNetworkConfig(
                   "topology: [ Ring ]\nnpus_count: [ four ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n",
                   "x")
                   .ok());
  auto missing = ParseNetworkConfig("topology: [ Ring ]\nnpus_count: [ 4 ]\n", "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("bandwidth"), std::string::npos);
  EXPECT_FALSE(ParseNetworkConfig("topology: [ Ring\n", "x").ok());
  EXPECT_FALSE(LoadNetworkConfig("/nonexistent/net.yml").ok());
}

// The tester's extreme inputs (bandwidth 1e-300, latency 1e30) once overflowed simulated
// time and tripped an internal check mid-run; every number of network.yml is now bounded up
// front, and each error names the file and the key.
TEST(NetworkConfigTest, OutOfRangeValuesAreErrorsNamingFileAndKey) {
  auto yml = [](const std::string& npus, const std::string& bw, const std::string& lat) {
    return "topology: [ Ring, Switch ]\nnpus_count: [ 4, " + npus + " ]\nbandwidth: [ 50, " +
           bw + " ]\nlatency: [ 500, " + lat + " ]\n";
  };
  const std::tuple<const char*, std::string, std::string, std::string> cases[] = {
      {"bandwidth", "2", "1e-300", "1"},   {"bandwidth", "2", "1e300", "1"},
      {"bandwidth", "2", ".nan", "1"},     {"bandwidth", "2", ".inf", "1"},
      {"bandwidth", "2", "-50", "1"},      {"bandwidth", "2", "0", "1"},
      {"bandwidth", "2", "fast", "1"},     {"bandwidth", "2", "[ 1 ]", "1"},
      {"latency", "2", "50", "1e30"},      {"latency", "2", "50", "-1"},
      {"latency", "2", "50", ".nan"},      {"latency", "2", "50", "-.inf"},
      {"latency", "2", "50", "1e13"},      {"latency", "2", "50", "soon"},
      {"npus_count", "0", "50", "1"},      {"npus_count", "-4", "50", "1"},
      {"npus_count", "1e10", "50", "1"},   {"npus_count", "4.5", "50", "1"},
      {"npus_count", "99999999999", "50", "1"}, {"npus_count", "8388608", "50", "1"},
  };
  for (const auto& [key, npus, bw, lat] : cases) {
    const std::string text = yml(npus, bw, lat);
    auto c = ParseNetworkConfig(text, "net.yml");
    ASSERT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.status().code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(c.status().message().find("net.yml: key \"" + std::string(key) + "\""),
              std::string::npos)
        << text << " -> " << c.status().message();
  }
  auto tiny = ParseNetworkConfig(yml("2", "1e-300", "1"), "net.yml");
  EXPECT_NE(tiny.status().message().find("1e-300 (dimension 1) is out of range"),
            std::string::npos)
      << tiny.status().message();
  // The bounds themselves are fine.
  EXPECT_TRUE(ParseNetworkConfig(yml("2", "1e-6", "1e12"), "net.yml").ok());
  EXPECT_TRUE(ParseNetworkConfig(yml("2", "1e9", "0"), "net.yml").ok());
  // Not a map, a map where a list belongs, an empty file.
  EXPECT_FALSE(ParseNetworkConfig("- 1\n- 2\n", "net.yml").ok());
  EXPECT_FALSE(ParseNetworkConfig(
                   "topology: { a: Ring }\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n",
                   "net.yml")
                   .ok());
  EXPECT_FALSE(ParseNetworkConfig("", "net.yml").ok());
}

}  // namespace
}  // namespace genie::config
