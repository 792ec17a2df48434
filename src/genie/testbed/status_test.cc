// `genie testbed status`: the parsers fed `ip`/`tc` output captured on Debian 12 (iproute2 6.1)
// and the text it prints, from a layout alone (no root).
#include "genie/testbed/status.h"

#include <gtest/gtest.h>

#include "genie/testbed/spec.h"

namespace genie::testbed {
namespace {

// `ip -j link show v0` of a veth with a tbf, its peer up, then down.
constexpr const char* kIpUp =
    R"([{"ifindex":3,"link":"v1","ifname":"v0","flags":["BROADCAST","MULTICAST","UP","LOWER_UP"],)"
    R"("mtu":1500,"qdisc":"tbf","operstate":"UP","linkmode":"DEFAULT","group":"default",)"
    R"("txqlen":1000,"link_type":"ether","address":"2a:ec:67:27:fb:cb",)"
    R"("broadcast":"ff:ff:ff:ff:ff:ff"}])";
constexpr const char* kIpPeerDown =
    R"([{"ifindex":3,"link":"v1","ifname":"v0","flags":["NO-CARRIER","BROADCAST","MULTICAST",)"
    R"("UP","M-DOWN"],"mtu":1500,"qdisc":"tbf","operstate":"LOWERLAYERDOWN","linkmode":"DEFAULT",)"
    R"("group":"default","txqlen":1000,"link_type":"ether","address":"2a:ec:67:27:fb:cb",)"
    R"("broadcast":"ff:ff:ff:ff:ff:ff"}])";
// `tc -j qdisc show dev v0` after `tc qdisc add dev v0 root tbf rate 100mbit burst 256kb
// limit 2mb` (tc gives the rate in bytes per second), and of an interface without one.
constexpr const char* kTcTbf =
    R"([{"kind":"tbf","handle":"8001:","root":true,"refcnt":3,)"
    R"("options":{"rate":12500000,"burst":262137,"lat":146801}}])";
constexpr const char* kTcNoqueue =
    R"([{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}])";

TEST(TestbedStatus, ReadsOperStateFromIp) {
  EXPECT_EQ(OperStateFromIpJson(kIpUp), "UP");
  EXPECT_EQ(OperStateFromIpJson(kIpPeerDown), "LOWERLAYERDOWN");
  EXPECT_EQ(OperStateFromIpJson("[]"), "?");
  EXPECT_EQ(OperStateFromIpJson(R"([{"ifname":"v0"}])"), "?");
  EXPECT_EQ(OperStateFromIpJson("Device \"v0\" does not exist."), "?");
  EXPECT_EQ(OperStateFromIpJson(""), "?");
}

TEST(TestbedStatus, ReadsTbfRateFromTcInBitsPerSecond) {
  EXPECT_EQ(TbfRateFromTcJson(kTcTbf), 100'000'000u);
  EXPECT_EQ(TbfRateFromTcJson(kTcNoqueue), std::nullopt);
  EXPECT_EQ(TbfRateFromTcJson("[]"), std::nullopt);
  EXPECT_EQ(TbfRateFromTcJson("not json"), std::nullopt);
  // A tbf under a root qdisc (the per-host scheduling): the tbf's rate.
  EXPECT_EQ(TbfRateFromTcJson(
                R"([{"kind":"prio","handle":"1:","root":true,"options":{"bands":3}},)"
                R"({"kind":"tbf","handle":"10:","parent":"1:1","options":{"rate":250000}}])"),
            2'000'000u);
}

TEST(TestbedStatus, QueriesEveryLinkEndAndKeepsTheLayoutsRateWhenTcSaysNothing) {
  TestbedSpec spec;
  spec.name = "st";
  ASSERT_TRUE(ParseTopology("star:2", &spec).ok());
  auto layout = LayOut(spec);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  RecordingShell shell;  // answers exit 0 with empty output: nothing parses
  auto ends = QueryLinkStates(*layout, shell);
  ASSERT_EQ(ends.size(), 2 * layout->links.size());
  for (const auto& e : ends) {
    EXPECT_EQ(e.state, "?");
    EXPECT_EQ(e.rate_bps, layout->links[0].rate_bps);
  }
  ASSERT_EQ(shell.commands.size(), 2 * ends.size());
  const LinkEnd& a = layout->links[0].a;
  EXPECT_EQ(ToString(shell.commands[0]), "ip -n " + a.netns + " -j link show " + a.ifname);
  EXPECT_EQ(ToString(shell.commands[1]), "tc -n " + a.netns + " -j qdisc show dev " + a.ifname);
}

TEST(TestbedStatus, FormatsDescriptionLinkEndsAndTcpCounters) {
  TestbedSpec spec;
  spec.name = "st";
  ASSERT_TRUE(ParseTopology("star:2", &spec).ok());
  spec.rate_bps = 1'000'000'000;
  spec.tcp_congestion = "cubic";
  auto layout = LayOut(spec);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  ASSERT_EQ(layout->links.size(), 2u);
  Counters counters;
  InterfaceCounters c;
  c.node = layout->links[0].a.node;
  c.ifname = layout->links[0].a.ifname;
  c.tx_bytes = 123456789;
  c.rx_bytes = 42;
  c.qdisc_drops = 7;
  c.qdisc_backlog_bytes = 1500;
  counters.interfaces.push_back(c);
  HostTcpCounters h;
  h.host = "h0";
  h.out_segs = 1000;
  h.retrans_segs = 3;
  h.timeouts = 1;
  counters.hosts.push_back(h);
  // h0's end shaped down to 200 Mbit/s (a fault), its peer's carrier lost; the rest unknown.
  std::vector<LinkEndState> ends = {{"UP", 200'000'000}, {"LOWERLAYERDOWN", 1'000'000'000}};
  const std::string text = FormatStatus(*layout, counters, ends);
  const std::string expected =
      "testbed st: star:2, 1 NIC(s) per host, 2 links, ECMP hash l4, TCP cubic\n"
      "host     netns        nic    address         \n"
      "h0       st-h0        eth0   10.100.0.1      \n"
      "h1       st-h1        eth0   10.100.0.2      \n"
      "\n"
      "link    end  interface  state  rate           tx bytes     rx bytes   q drops   backlog\n"
      "h0      h0   eth0       UP     200mbit       123456789           42         7      1500\n"
      "h0      sw   h0n0       LOWERLAYERDOWN 1gbit                 0            0         0"
      "         0\n"
      "h1      h1   eth0       ?      1gbit                 0            0         0         0\n"
      "h1      sw   h1n0       ?      1gbit                 0            0         0         0\n"
      "\n"
      "host       tcp out segs   retrans segs   timeouts\n"
      "h0                 1000              3          1\n";
  EXPECT_EQ(text, expected);
  const nlohmann::json j = StatusJson(*layout, counters);
  EXPECT_EQ(j["counters"], counters.ToJson());
  nlohmann::json description = j;
  description.erase("counters");
  EXPECT_EQ(description, layout->ToJson());
}

}  // namespace
}  // namespace genie::testbed
