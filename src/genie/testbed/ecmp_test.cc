// Known-hash ECMP (ecmp.h) without root: the leaves' answers come from a fake `ip` that reads
// the batch file it is given and answers each `route get` with a spine of its own choosing.
#include "genie/testbed/ecmp.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "genie/testbed/spec.h"

namespace genie::testbed {
namespace {

Layout LeafSpine(const std::string& topology, EcmpHash hash) {
  TestbedSpec s;
  s.name = "ec";
  EXPECT_TRUE(ParseTopology(topology, &s).ok());
  s.rate_bps = 1'000'000'000;
  s.hash = hash;
  auto l = LayOut(s);
  EXPECT_TRUE(l.ok());
  return *l;
}

// Answers `ip -n NS -batch FILE` as the kernel would print it, spine = (last octet of the
// source + last octet of the destination) % 2; `drop` answers leave out that many lines.
class FakeIp : public Shell {
 public:
  CommandResult Run(const Argv& argv) override {
    commands.push_back(argv);
    std::ifstream in(argv.back());
    std::string out;
    for (std::string line; std::getline(in, line);) {
      std::istringstream w(line);
      std::string route, get, dst, from, src;
      w >> route >> get >> dst >> from >> src;
      if (drop > 0) {
        --drop;
        continue;
      }
      int spine =
          (std::stoi(dst.substr(dst.rfind('.') + 1)) + std::stoi(src.substr(src.rfind('.') + 1))) %
          2;
      // With ports (ECMP l4): (sport + dport) % 2.
      std::map<std::string, std::string> rest;
      for (std::string k, v; w >> k >> v;) rest[k] = v;
      if (rest.count("sport")) spine = (std::stoi(rest["sport"]) + std::stoi(rest["dport"])) % 2;
      out += dst + " from " + src + " via 10.255.0." + std::to_string(2 * spine + 1) + " dev s" +
             std::to_string(spine) + " \n    cache iif br0 \n";
    }
    return {0, out, ""};
  }
  std::vector<Argv> commands;
  int drop = 0;
};

TEST(Ecmp, SpineOfRouteGet) {
  EXPECT_EQ(SpineOfRouteGet("10.100.1.1 from 10.100.0.1 via 10.255.0.3 dev s1 "), 1);
  EXPECT_EQ(SpineOfRouteGet("10.100.1.1 from 10.100.0.1 via 10.255.0.21 dev s10 uid 0"), 10);
  EXPECT_EQ(SpineOfRouteGet("10.100.0.2 from 10.100.0.1 dev br0 "), -1);
  EXPECT_EQ(SpineOfRouteGet("    cache iif br0 "), -1);
  EXPECT_EQ(SpineOfRouteGet("x dev sx"), -1);
}

TEST(Ecmp, EveryPairAcrossLeavesGetsTheSpineItsLeafNames) {
  const Layout layout = LeafSpine("leafspine:2x2x2", EcmpHash::kL3);
  ASSERT_TRUE(EcmpKnown(layout));
  FakeIp ip;
  auto routes = QueryEcmpRoutes(layout, ip);
  ASSERT_TRUE(routes.ok()) << routes.status().message();
  ASSERT_EQ(ip.commands.size(), 2u);  // one batch per leaf
  EXPECT_EQ(ip.commands[0][2], "ec-l0");
  EXPECT_EQ(ip.commands[1][2], "ec-l1");
  // Hosts 0,1 on leaf 0 (10.100.0.1, .2), 2,3 on leaf 1 (10.100.1.1, .2): 8 ordered pairs.
  const std::vector<config::EcmpRoute> expected = {{0, 2, 0}, {0, 3, 1}, {1, 2, 1}, {1, 3, 0},
                                                   {2, 0, 0}, {2, 1, 1}, {3, 0, 1}, {3, 1, 0}};
  EXPECT_EQ(*routes, expected);
  // The network.yml carries them for the flow model, and it reads them back.
  const std::string yml = ToNetworkYml(layout, 1, 1000, nullptr, &*routes);
  auto config = config::ParseNetworkConfig(yml, "t.yml");
  ASSERT_TRUE(config.ok()) << config.status().message() << "\n" << yml;
  EXPECT_EQ(config->leaf_spine.routes, expected);
}

TEST(Ecmp, UnknownHashOrMissingAnswers) {
  FakeIp ip;
  auto l4 = QueryEcmpRoutes(LeafSpine("leafspine:2x2x2", EcmpHash::kL4), ip);
  ASSERT_TRUE(l4.ok());
  EXPECT_TRUE(l4->empty());
  EXPECT_TRUE(ip.commands.empty());
  EXPECT_FALSE(
      EcmpKnown(LeafSpine("leafspine:2x1x2", EcmpHash::kL3)));  // one spine: nothing to know
  ip.drop = 1;
  auto partial = QueryEcmpRoutes(LeafSpine("leafspine:2x2x2", EcmpHash::kL3), ip);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("ec-l0"), std::string::npos)
      << partial.status().message();
}

// ECMP l4: each connection direction asked from its source's leaf with its ports, keyed by the
// ranks and channel it was recorded with; flows within a leaf and strangers are not asked.
TEST(Ecmp, EveryConnectionAcrossLeavesGetsTheSpineItsPortsHashTo) {
  const Layout layout = LeafSpine("leafspine:2x2x2", EcmpHash::kL4);
  ASSERT_FALSE(EcmpKnown(layout));
  ASSERT_TRUE(EcmpPerConnection(layout));
  EXPECT_FALSE(EcmpPerConnection(LeafSpine("leafspine:2x2x2", EcmpHash::kL3)));
  // Hosts 0,1 on leaf 0 (10.100.0.1, .2), 2,3 on leaf 1 (10.100.1.1, .2).
  const std::vector<ConnectionFlow> flows = {
      {0, 2, 0, "10.100.0.1:40001", "10.100.1.1:5000"},  // (40001 + 5000) % 2 = 1
      {0, 2, 1, "10.100.0.1:40002", "10.100.1.1:5000"},  // 0: same pair, other channel
      {2, 0, 0, "10.100.1.1:5000", "10.100.0.1:40001"},  // the way back, from leaf 1: 1
      {1, 3, 0, "10.100.0.2:40004", "10.100.1.2:5001"},  // 1
      {0, 1, 0, "10.100.0.1:40003", "10.100.0.2:5002"},  // within leaf 0: not asked
      {0, 3, 0, "127.0.0.1:40005", "127.0.0.1:5003"},   // not the testbed's: not asked
  };
  FakeIp ip;
  auto spines = QueryConnectionSpines(layout, flows, ip);
  ASSERT_TRUE(spines.ok()) << spines.status().message();
  ASSERT_EQ(ip.commands.size(), 2u);  // one batch per leaf
  EXPECT_EQ(ip.commands[0][2], "ec-l0");
  EXPECT_EQ(ip.commands[1][2], "ec-l1");
  const std::vector<config::EcmpConnection> expected = {
      {0, 2, 0, 1}, {0, 2, 1, 0}, {1, 3, 0, 1}, {2, 0, 0, 1}};
  EXPECT_EQ(*spines, expected);
  // The flow model's key reads them back from a network.yml.
  const std::string yml = ToNetworkYml(layout, 1, 1000) +
                          "ecmp_connections: [ [0, 2, 0, 1], [0, 2, 1, 0] ]\n";
  auto config = config::ParseNetworkConfig(yml, "t.yml");
  ASSERT_TRUE(config.ok()) << config.status().message() << "\n" << yml;
  EXPECT_EQ(config->leaf_spine.connections,
            (std::vector<config::EcmpConnection>{{0, 2, 0, 1}, {0, 2, 1, 0}}));

  // A leaf that answers fewer than it was asked: an error naming it and a connection.
  ip.drop = 1;
  auto partial = QueryConnectionSpines(layout, flows, ip);
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("ec-l0"), std::string::npos)
      << partial.status().message();
  EXPECT_NE(partial.status().message().find("rank 0 -> rank 2 channel"), std::string::npos)
      << partial.status().message();
  // An endpoint that is not address:port.
  FakeIp fresh;
  auto bad = QueryConnectionSpines(layout, {{0, 2, 0, "10.100.0.1", "10.100.1.1:5000"}}, fresh);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rank 0"), std::string::npos);
  // l3: nothing asked (the pairs' routes hold).
  FakeIp l3;
  auto none = QueryConnectionSpines(LeafSpine("leafspine:2x2x2", EcmpHash::kL3), flows, l3);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_TRUE(l3.commands.empty());
}

}  // namespace
}  // namespace genie::testbed
