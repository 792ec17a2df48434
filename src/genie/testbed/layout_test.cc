// The testbed's names, addresses, commands and network.yml, from specs alone (no root).
#include "genie/testbed/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "genie/config/network_config.h"
#include "genie/testbed/commands.h"
#include "genie/testbed/fault.h"
#include "genie/testbed/spec.h"

namespace genie::testbed {
namespace {

TestbedSpec Spec(const std::string& topology, int nics = 1) {
  TestbedSpec s;
  s.name = "tb";
  EXPECT_TRUE(ParseTopology(topology, &s).ok());
  s.nics = nics;
  return s;
}

bool Has(const std::vector<Argv>& cmds, const std::string& text) {
  return std::any_of(cmds.begin(), cmds.end(), [&](const Argv& a) { return ToString(a) == text; });
}

TEST(TestbedSpec, ParsesTopologiesAndRejectsOthers) {
  TestbedSpec s;
  ASSERT_TRUE(ParseTopology("star:8", &s).ok());
  EXPECT_EQ(s.hosts, 8);
  ASSERT_TRUE(ParseTopology("leafspine:2x3x4", &s).ok());
  EXPECT_EQ(s.kind, TopologyKind::kLeafSpine);
  EXPECT_EQ(s.hosts, 8);
  EXPECT_EQ(s.spines, 3);
  for (const char* bad : {"star", "star:x", "ring:8", "leafspine:2x2", ""}) {
    Status st = ParseTopology(bad, &s);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("leafspine:LxSxH"), std::string::npos) << st.message();
  }
}

TEST(TestbedSpec, NamesArePrefixSafe) {
  EXPECT_TRUE(CheckName("genie").ok());
  EXPECT_TRUE(CheckName("tb_2").ok());
  for (const char* bad : {"", "Genie", "a b", "-x", "x;rm", "averyveryverylongname"}) {
    EXPECT_FALSE(CheckName(bad).ok()) << bad;
  }
}

TEST(TestbedSpec, YamlSetsEverythingAndNamesMistakes) {
  TestbedSpec s;
  ASSERT_TRUE(ParseSpecYaml("name: lab\ntopology: leafspine:2x2x2\nrate: 400mbit\nqueue: 1MB\n"
                            "mtu: 9000\nnics: 2\nhash: l3\ntcp_congestion: bbr\nlinks:\n"
                            "  - link: h1\n    rate: 100mbit\n"
                            "    mtu: 1500\n",
                            "tb.yml", &s)
                  .ok());
  EXPECT_EQ(s.name, "lab");
  EXPECT_EQ(s.rate_bps, 400'000'000u);
  EXPECT_EQ(s.queue_bytes, 1'000'000u);
  EXPECT_EQ(s.mtu, 9000);
  EXPECT_EQ(s.nics, 2);
  EXPECT_EQ(s.hash, EcmpHash::kL3);
  EXPECT_EQ(s.tcp_congestion, "bbr");
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(*s.links[0].rate_bps, 100'000'000u);

  TestbedSpec t;
  Status st = ParseSpecYaml("topology: star:4\nspeed: 1gbit\n", "tb.yml", &t);
  EXPECT_NE(st.message().find("tb.yml: unknown key 'speed'"), std::string::npos) << st.message();
  st = ParseSpecYaml("topology: star:4\nrate: 1GB\n", "tb.yml", &t);
  EXPECT_NE(st.message().find("rate"), std::string::npos) << st.message();
  st = ParseSpecYaml("links:\n  - rate: 1gbit\n", "tb.yml", &t);
  EXPECT_NE(st.message().find("link: h3"), std::string::npos) << st.message();
  TestbedSpec u = Spec("star:4");
  u.tcp_congestion = "bbr; rm";
  st = ValidateSpec(u);
  EXPECT_NE(st.message().find("tcp_congestion: 'bbr; rm'"), std::string::npos) << st.message();
}

TEST(TestbedLayout, StarHasOneBridgePerRailAndAddressesPerNic) {
  auto l = LayOut(Spec("star:3", 2));
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->hosts.size(), 3u);
  ASSERT_EQ(l->links.size(), 6u);
  EXPECT_EQ(l->hosts[2].netns, "tb-h2");
  EXPECT_EQ(l->hosts[2].nics[1].address, "10.101.0.3");
  EXPECT_EQ(l->hosts[2].nics[1].link, "h2:1");
  EXPECT_EQ(l->RendezvousAddress(), "10.100.0.1");
  const Link* h2 = l->FindLink("h2:1");
  ASSERT_NE(h2, nullptr);
  EXPECT_EQ(h2->b.netns, "tb-sw");
  EXPECT_EQ(h2->b.ifname, "h2n1");
  EXPECT_EQ(h2->b.bridge, "br1");
  // Shaping that keeps TCP near the rate (REFERENCE §4).
  EXPECT_GE(h2->burst_bytes, 128u * 1024);
  EXPECT_GE(h2->queue_bytes, 2'000'000u);
  auto cmds = UpCommands(*l);
  EXPECT_TRUE(Has(cmds, "ip netns add tb-sw"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-sw link add br1 type bridge"));
  EXPECT_TRUE(Has(cmds, "ip link add eth1 address 02:67:6e:00:05:00 netns tb-h2 type veth peer "
                        "name h2n1 address 02:67:6e:00:05:01 netns tb-sw"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-sw link set h2n1 master br1"));
  // The hosts keep the congestion control a namespace inherits unless one is asked for.
  for (const auto& c : cmds) {
    EXPECT_EQ(ToString(c).find("tcp_congestion"), std::string::npos) << ToString(c);
  }
  TestbedSpec cubic = Spec("star:4");
  cubic.tcp_congestion = "cubic";
  auto cmds_cubic = UpCommands(*LayOut(cubic));
  EXPECT_TRUE(
      Has(cmds_cubic, "ip netns exec tb-h2 sysctl -q -w net.ipv4.tcp_congestion_control=cubic"));
  EXPECT_FALSE(
      Has(cmds_cubic, "ip netns exec tb-sw sysctl -q -w net.ipv4.tcp_congestion_control=cubic"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-h2 addr add 10.101.0.3/16 dev eth1"));
  // Both directions shaped: the host's NIC and the switch port.
  EXPECT_TRUE(Has(cmds, "tc -n tb-h2 qdisc replace dev eth1 root handle 1: tbf rate 1000000000bit "
                        "burst 131072 limit 2500000"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-sw qdisc replace dev h2n1 root tbf rate 1000000000bit burst "
                        "131072 limit 2500000"));
  // Every command is unique and down removes every namespace up made.
  std::set<std::string> added;
  for (const auto& c : cmds) {
    if (c.size() == 4 && c[1] == "netns" && c[2] == "add") added.insert(c[3]);
  }
  std::set<std::string> removed;
  for (const auto& c : DownCommands(*l)) removed.insert(c[3]);
  EXPECT_EQ(added, removed);
}

TEST(TestbedLayout, LeafSpineRoutesOverEverySpine) {
  TestbedSpec s = Spec("leafspine:2x2x4");
  s.links.push_back({"l1-s0", 200'000'000, std::nullopt, std::nullopt});
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->hosts.size(), 8u);
  EXPECT_EQ(l->switches.size(), 4u);
  EXPECT_EQ(l->links.size(), 8u + 4u);
  EXPECT_EQ(l->hosts[5].nics[0].address, "10.100.1.2");
  EXPECT_EQ(l->FindLink("l1-s0")->rate_bps, 200'000'000u);
  EXPECT_EQ(l->FindLink("l0-s0")->rate_bps, 1'000'000'000u);
  auto cmds = UpCommands(*l);
  EXPECT_TRUE(Has(cmds, "ip -n tb-l0 route add 10.100.1.0/24 nexthop via 10.255.0.1 dev s0 "
                        "nexthop via 10.255.0.3 dev s1"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-s1 route add 10.100.1.0/24 via 10.255.1.2 dev l1"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-h5 route add 10.100.0.0/16 via 10.100.1.254 dev eth0"));
  EXPECT_TRUE(Has(cmds, "ip netns exec tb-l0 sysctl -q -w net.ipv4.fib_multipath_hash_policy=3"));
  EXPECT_TRUE(Has(cmds, "ip -n tb-l0 addr add 10.255.0.2/31 dev s1"));
  // Leaf and spine know each other's MAC from the start (else ECMP skips a spine at first).
  EXPECT_TRUE(Has(cmds, "ip -n tb-l0 neigh replace 10.255.0.3 lladdr 02:67:6e:00:05:01 dev s1 nud "
                        "permanent"));

  TestbedSpec bad = Spec("star:4");
  bad.links.push_back({"h9", 1'000'000, std::nullopt, std::nullopt});
  auto r = LayOut(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'h9' is not a link of star:4"), std::string::npos);
}

TEST(TestbedLayout, DescriptionRoundTrips) {
  auto l = LayOut(Spec("leafspine:2x2x2", 2));
  ASSERT_TRUE(l.ok());
  auto back = LayoutFromJson(l->ToJson(), "x.json");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->ToJson(), l->ToJson());
  auto broken = LayoutFromJson(nlohmann::json{{"format", "genie-testbed/1"}}, "x.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("x.json"), std::string::npos);
}

TEST(TestbedLayout, NetworkYmlIsWhatAstraSimReads) {
  TestbedSpec s = Spec("star:8");
  s.rate_bps = 1'000'000'000;
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok());
  const std::string one = ToNetworkYml(*l, 1, 30000);
  EXPECT_NE(one.find("topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 0.116415 ]\n"
                     "latency: [ 30000 ]"),
            std::string::npos)
      << one;
  // Two ranks per host share the NIC; the ranks of a host are the last dimension.
  const std::string two = ToNetworkYml(*l, 2, 30000);
  EXPECT_NE(two.find("npus_count: [ 8, 2 ]\nbandwidth: [ 0.0582077, 2 ]"), std::string::npos) << two;
  // The flow model's keys: that last dimension is the hosts' loopback, and a machine of 2 cores
  // moves 2 x one loopback stream's rate in all.
  auto net = config::ParseNetworkConfig(ToNetworkYml(*l, 2, 30000, nullptr, nullptr, 2), "two");
  ASSERT_TRUE(net.ok()) << net.status().ToString();
  EXPECT_TRUE(net->ignored_keys.empty());
  EXPECT_EQ(net->loopback_dimension, 1);
  EXPECT_EQ(net->GoodputOf(0), config::kDefaultGoodput);  // uncalibrated
  EXPECT_EQ(net->GoodputOf(1), config::kHostLoopbackGoodput);  // lo: payload, no framing
  EXPECT_EQ(net->machine_gbps, 2 * config::kHostLoopbackGbps);
  auto alone = config::ParseNetworkConfig(ToNetworkYml(*l, 1, 30000, nullptr, nullptr, 2), "one");
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_EQ(alone->loopback_dimension, -1);  // no ranks share a host here, jobs may append one
  EXPECT_EQ(alone->machine_gbps, 2 * config::kHostLoopbackGbps);
  EXPECT_EQ(one.find("loopback"), std::string::npos);  // no machine named: no keys
  EXPECT_EQ(one.find("machine"), std::string::npos);
}

// A leaf-spine testbed as the models read it: ASTRA-sim's [Switch hosts of a leaf, Switch
// leaves] unchanged in form, plus the flow model's fabric keys with the leaf-spine links' own
// rate (--spine-rate / spine_rate, or the slowest per-link override), calibration carried.
TEST(TestbedLayout, LeafSpineNetworkYmlDescribesTheFabric) {
  TestbedSpec s;
  ASSERT_TRUE(ParseSpecYaml("name: ls\ntopology: leafspine:2x1x4\nrate: 400mbit\n"
                            "spine_rate: 200mbit\n",
                            "ls.yml", &s)
                  .ok());
  ASSERT_EQ(s.spine_rate_bps, 200'000'000u);
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->FindLink("l0-s0")->rate_bps, 200'000'000u);
  EXPECT_EQ(l->FindLink("l1-s0")->rate_bps, 200'000'000u);
  EXPECT_EQ(l->FindLink("h3")->rate_bps, 400'000'000u);
  const std::string yml = ToNetworkYml(*l, 1, 30000);
  auto net = config::ParseNetworkConfig(yml, "ls");
  ASSERT_TRUE(net.ok()) << net.status().ToString() << "\n" << yml;
  EXPECT_EQ(net->npus_count, (std::vector<int>{4, 2}));
  const double host = 400e6 / 8 / (1 << 30), spine = 200e6 / 8 / (1 << 30);
  EXPECT_NEAR(net->bandwidth_gbps[0], host, 1e-6);
  EXPECT_NEAR(net->bandwidth_gbps[1], spine / 4, 1e-6);  // the uplink's share per host
  EXPECT_EQ(net->leaf_spine.spines, 1);
  EXPECT_NEAR(net->leaf_spine.bandwidth_gbps, spine, 1e-6);
  EXPECT_EQ(net->leaf_spine.latency_ns, 30000);
  EXPECT_TRUE(net->ignored_keys.empty());
  EXPECT_NE(yml.find("ecmp: split"), std::string::npos) << yml;

  // Calibrated: goodput and overhead on both fabric dimensions (the spine links use dim 1's).
  const MeasuredCosts costs{0.95, 40000};
  auto cal = config::ParseNetworkConfig(ToNetworkYml(*l, 2, 1, &costs), "cal");
  ASSERT_TRUE(cal.ok()) << cal.status().ToString();
  EXPECT_EQ(cal->npus_count, (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(cal->GoodputOf(1), 0.95);
  EXPECT_EQ(cal->GoodputOf(2), config::kHostLoopbackGoodput);
  EXPECT_EQ(cal->MessageOverheadNsOf(1), 40000);
  EXPECT_EQ(cal->leaf_spine.latency_ns, 1);
  EXPECT_NEAR(cal->leaf_spine.bandwidth_gbps, spine, 1e-6);  // per link, not per rank

  // Without --spine-rate, the leaf-spine links run at the rate; a per-link override that slows
  // one is the fabric's rate in the description (the model has one spine bandwidth).
  TestbedSpec u = Spec("leafspine:2x2x4");
  u.rate_bps = 400'000'000;
  u.links.push_back({"l1-s1", 100'000'000, std::nullopt, std::nullopt});
  auto ul = LayOut(u);
  ASSERT_TRUE(ul.ok());
  EXPECT_EQ(ul->FindLink("l0-s0")->rate_bps, 400'000'000u);
  auto un = config::ParseNetworkConfig(ToNetworkYml(*ul, 1, 30000), "u");
  ASSERT_TRUE(un.ok());
  EXPECT_EQ(un->leaf_spine.spines, 2);
  EXPECT_NEAR(un->leaf_spine.bandwidth_gbps, 100e6 / 8 / (1 << 30), 1e-6);

  // A star has no spines: no fabric keys, and --spine-rate is refused.
  TestbedSpec star = Spec("star:4");
  EXPECT_EQ(ToNetworkYml(*LayOut(star), 1, 30000).find("spines"), std::string::npos);
  star.spine_rate_bps = 100'000'000;
  auto refused = LayOut(star);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("spine_rate"), std::string::npos);
}

// --spine-queue / spine_queue sizes the leaf-spine link ends' queues only; a per-link override
// still wins, and a star (no spines) refuses it.
TEST(TestbedLayout, SpineQueueSizesOnlyTheFabricLinks) {
  TestbedSpec s;
  ASSERT_TRUE(ParseSpecYaml("topology: leafspine:2x2x4\nrate: 1gbit\nspine_queue: 512KB\n"
                            "links:\n  - link: l1-s1\n    queue: 1MB\n",
                            "ls.yml", &s)
                  .ok());
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->FindLink("l0-s0")->queue_bytes, 512'000u);
  EXPECT_EQ(l->FindLink("l1-s0")->queue_bytes, 512'000u);
  EXPECT_EQ(l->FindLink("l1-s1")->queue_bytes, 1'000'000u);
  EXPECT_EQ(l->FindLink("h0")->queue_bytes, DefaultQueueFor(1'000'000'000));

  TestbedSpec star = Spec("star:4");
  star.spine_queue_bytes = 512'000;
  auto refused = LayOut(star);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("spine_queue"), std::string::npos);
}

// A leaf-spine link end shares its rate per sending host by default: an htb class per host that
// can send through it (a leaf's own hosts up, the other leaves' hosts down), each guaranteed an
// equal part and queueing alone; `spine_sched: fifo` keeps one tbf; a star refuses the key.
TEST(TestbedLayout, SpineLinksQueuePerSendingHost) {
  TestbedSpec s = Spec("leafspine:3x1x2", 2);
  s.spine_rate_bps = 600'000'000;
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->FindLink("l0-s0")->scheduling, Scheduling::kPerHost);
  EXPECT_EQ(l->FindLink("h0")->scheduling, Scheduling::kFifo);
  const auto cmds = UpCommands(*l);
  auto count = [&](const std::string& prefix) {
    return std::count_if(cmds.begin(), cmds.end(),
                         [&](const Argv& a) { return ToString(a).rfind(prefix, 0) == 0; });
  };
  // Leaf 1's uplink: its two hosts, each NIC's address filtered to the host's class.
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 qdisc replace dev s0 root handle 1: htb default 2"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 class replace dev s0 parent 1: classid 1:1 htb rate "
                        "600000000bit ceil 600000000bit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 class replace dev s0 parent 1:1 classid 1:101 htb rate "
                        "200000000bit ceil 600000000bit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 qdisc replace dev s0 parent 1:101 handle 101: bfifo limit 2000000"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 filter add dev s0 parent 1: protocol ip prio 1 u32 match ip "
                        "src 10.100.1.2/32 flowid 1:101"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-l1 filter add dev s0 parent 1: protocol ip prio 1 u32 match ip "
                        "src 10.101.1.2/32 flowid 1:101"));
  EXPECT_EQ(count("tc -n tb-l1 filter add dev s0 "), 4);  // 2 hosts x 2 NICs
  EXPECT_EQ(count("tc -n tb-l1 class replace dev s0 parent 1:1 "), 3);  // and the last class
  // The spine's port to leaf 1 carries the four hosts of leaves 0 and 2, a fifth each.
  EXPECT_EQ(count("tc -n tb-s0 filter add dev l1 "), 8);
  EXPECT_TRUE(Has(cmds, "tc -n tb-s0 filter add dev l1 parent 1: protocol ip prio 1 u32 match ip "
                        "src 10.100.2.1/32 flowid 1:102"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-s0 class replace dev l1 parent 1:1 classid 1:103 htb rate "
                        "120000000bit ceil 600000000bit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_EQ(count("tc -n tb-s0 filter add dev l1 parent 1: protocol ip prio 1 u32 match ip src 10.100.1."), 0);
  // Host links' switch ends stay one tbf.
  EXPECT_TRUE(Has(cmds, "tc -n tb-l0 qdisc replace dev h0n0 root tbf rate 1000000000bit burst "
                        "131072 limit 2500000"));
  // The description keeps it.
  auto back = LayoutFromJson(l->ToJson(), "x.json");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->FindLink("l2-s0")->scheduling, Scheduling::kPerHost);

  TestbedSpec fifo;
  ASSERT_TRUE(ParseSpecYaml("topology: leafspine:2x1x2\nspine_sched: fifo\n", "ls.yml", &fifo).ok());
  auto f = LayOut(fifo);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->FindLink("l0-s0")->scheduling, Scheduling::kFifo);
  EXPECT_TRUE(Has(UpCommands(*f), "tc -n genie-l0 qdisc replace dev s0 root tbf rate 1000000000bit "
                                  "burst 131072 limit 2500000"));

  TestbedSpec bad;
  Status st = ParseSpecYaml("topology: leafspine:2x1x2\nspine_sched: fair\n", "ls.yml", &bad);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ls.yml"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("fifo, per-host or ack-first"), std::string::npos) << st.message();

  TestbedSpec star = Spec("star:4");
  star.spine_scheduling = Scheduling::kFifo;
  auto refused = LayOut(star);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("spine_sched"), std::string::npos);
}

// A host's own NIC sends its pure ACKs first by default (its tbf holds an htb with a prio-0
// class the u32 filter fills with TCP packets under 128 bytes, and the bulk class behind it), as
// a host with fq does; `host_sched: fifo` keeps one tbf. The switch's end is untouched either way, the
// description keeps the setting, and a description from before it reads as fifo.
TEST(TestbedLayout, HostsSendTheirAcksFirst) {
  TestbedSpec s = Spec("star:2");
  s.rate_bps = 400'000'000;
  auto l = LayOut(s);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  const Link& h1 = *l->FindLink("h1");
  EXPECT_EQ(h1.SchedulingOf(h1.a), Scheduling::kAckFirst);
  EXPECT_EQ(h1.SchedulingOf(h1.b), Scheduling::kFifo);
  const auto cmds = UpCommands(*l);
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 qdisc replace dev eth0 root handle 1: tbf rate 400000000bit "
                        "burst 131072 limit 2000000"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 qdisc replace dev eth0 parent 1:1 handle 2: htb default 20"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 class replace dev eth0 parent 2: classid 2:10 htb prio 0 "
                        "rate 100gbit ceil 100gbit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 class replace dev eth0 parent 2: classid 2:20 htb prio 1 "
                        "rate 100gbit ceil 100gbit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 qdisc replace dev eth0 parent 2:10 handle 10: bfifo limit 2000000"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 qdisc replace dev eth0 parent 2:20 handle 20: bfifo limit 2000000"));
  EXPECT_TRUE(Has(cmds, "tc -n tb-h1 filter add dev eth0 parent 2: protocol ip prio 1 u32 match ip "
                        "protocol 6 0xff match u16 0x0000 0xff80 at 2 flowid 2:10"));
  // A fault changes the rate and the queues in place, keeping the classes and the filter.
  const auto change = ShapeCommands(*l, h1, h1.a, 100'000'000, 131072, 500'000, ShapeStep::kChange);
  ASSERT_EQ(change.size(), 3u);
  EXPECT_EQ(ToString(change[0]), "tc -n tb-h1 qdisc replace dev eth0 root tbf rate 100000000bit "
                                 "burst 131072 limit 500000");
  EXPECT_EQ(ToString(change[2]), "tc -n tb-h1 qdisc replace dev eth0 parent 2:20 handle 20: bfifo "
                                 "limit 500000");
  EXPECT_TRUE(Has(cmds, "tc -n tb-sw qdisc replace dev h1n0 root tbf rate 400000000bit burst 131072 "
                        "limit 2000000"));
  auto back = LayoutFromJson(l->ToJson(), "x.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->FindLink("h0")->host_scheduling, Scheduling::kAckFirst);
  nlohmann::json old = l->ToJson();
  for (auto& link : old["links"]) link.erase("host_scheduling");
  auto before = LayoutFromJson(old, "old.json");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->FindLink("h0")->host_scheduling, Scheduling::kFifo);
  nlohmann::json edited = l->ToJson();
  edited["links"][0]["host_scheduling"] = "per-host";
  auto refused_json = LayoutFromJson(edited, "edited.json");
  ASSERT_FALSE(refused_json.ok());
  EXPECT_NE(refused_json.status().message().find("edited.json: link h0"), std::string::npos)
      << refused_json.status().message();

  TestbedSpec fifo;
  ASSERT_TRUE(ParseSpecYaml("topology: leafspine:2x1x2\nhost_sched: fifo\n", "ls.yml", &fifo).ok());
  auto f = LayOut(fifo);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->FindLink("h0")->host_scheduling, Scheduling::kFifo);
  EXPECT_EQ(f->FindLink("l0-s0")->scheduling, Scheduling::kPerHost);  // the spines keep theirs
  EXPECT_TRUE(Has(UpCommands(*f), "tc -n genie-h0 qdisc replace dev eth0 root tbf rate 1000000000bit "
                                  "burst 131072 limit 2500000"));

  // Each setting where it means something: a host's NIC has one sender, a spine many.
  TestbedSpec per_host = Spec("star:2");
  per_host.host_scheduling = Scheduling::kPerHost;
  auto refused = LayOut(per_host);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("host_sched"), std::string::npos);
  TestbedSpec spine_acks = Spec("leafspine:2x1x2");
  spine_acks.spine_scheduling = Scheduling::kAckFirst;
  refused = LayOut(spine_acks);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("spine_sched"), std::string::npos);
}

TEST(TestbedLayout, QueueLimitsFollowTheFaultsRule) {
  // `testbed up --queue 1` was built (a 1-byte queue) where `testbed fault --queue 1` is
  // refused: one rule for both.
  for (const Bytes q : {Bytes{1}, Bytes{2999}, Bytes{1} << 40}) {
    TestbedSpec s = Spec("star:2");
    s.queue_bytes = q;
    Status st = ValidateSpec(s);
    ASSERT_FALSE(st.ok()) << q;
    EXPECT_NE(st.message().find("queue: "), std::string::npos) << st.message();
    EXPECT_FALSE(LayOut(s).ok());
    Fault f;
    f.link = "h1";
    f.kind = FaultKind::kQueue;
    f.queue_bytes = q;
    EXPECT_FALSE(ValidateFault(f).ok()) << q;
    TestbedSpec l = Spec("star:2");
    l.links.push_back({});
    l.links.back().link = "h1";
    l.links.back().queue_bytes = q;
    EXPECT_FALSE(ValidateSpec(l).ok()) << q;
  }
  TestbedSpec ls = Spec("leafspine:2x2x2");
  ls.spine_queue_bytes = 100;
  EXPECT_NE(ValidateSpec(ls).message().find("spine_queue"), std::string::npos);
  TestbedSpec ok = Spec("star:2");
  ok.queue_bytes = 3000;
  EXPECT_TRUE(ValidateSpec(ok).ok());
}

}  // namespace
}  // namespace genie::testbed
