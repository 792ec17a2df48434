// Known-hash ECMP on a real testbed, as root: leafspine:2x2x2 with `--hash l3`. The network.yml
// `genie testbed network-yml` writes pins every pair of hosts across leaves to a spine
// (`ecmp_routes`), and the flow model's path for that pair (Topology::FlowRoute) goes up that
// spine — the one `ip route get DST from SRC iif br0` in the source's leaf names, and the one a
// burst of UDP datagrams really leaves by (the leaf's uplink counters). With `--hash l4` the
// pairs are not pinned (split), but a run's connections are: each rank records its connections'
// ports, the prediction asks each one's spine of its leaf (`ip route get ... ipproto tcp sport S
// dport D`), the model routes each connection there, and the bytes of the run leave each leaf's
// uplinks as those spines say. Needs root; skips otherwise; the testbeds are taken down also
// when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "genie/config/network_config.h"
#include "genie/driver/connection_spines.h"
#include "genie/sim/topology.h"
#include "genie/testbed/control.h"
#include "genie/testbed/ecmp.h"
#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

class EcmpKnown : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    name_ = "e" + std::to_string(getpid());
  }
  void TearDown() override {
    if (name_.empty()) return;
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  void Up(const std::string& hash) {
    CliResult up = RunCli(Genie("testbed up --name " + name_ +
                                " --topology leafspine:2x2x2 --rate 1gbit --hash " + hash));
    ASSERT_EQ(up.exit_code, 0) << up.output;
  }
  Result<config::NetworkConfig> NetworkYml() {
    CliResult yml = RunCli(Genie("testbed network-yml " + name_), Stderr::kApart);
    EXPECT_EQ(yml.exit_code, 0) << yml.output << yml.errors;
    return config::ParseNetworkConfig(yml.output, "network-yml " + name_);
  }
  // The spine `ip route get` names for host a -> host b (host i of leaf i / 2 at
  // 10.100.(i/2).(i%2+1)); -1 when it names none.
  int KernelSpine(int a, int b) {
    auto address = [](int i) {
      return "10.100." + std::to_string(i / 2) + "." + std::to_string(i % 2 + 1);
    };
    CliResult r = RunCli("ip -n " + name_ + "-l" + std::to_string(a / 2) + " route get " +
                         address(b) + " from " + address(a) + " iif br0");
    const size_t at = r.output.find(" dev s");
    return at == std::string::npos ? -1 : std::stoi(r.output.substr(at + 6));
  }
  // Bytes leaf `leaf` has sent up spine `spine` so far.
  long UplinkBytes(int leaf, int spine) {
    CliResult r = RunCli("ip -n " + name_ + "-l" + std::to_string(leaf) + " -s -j link show s" +
                         std::to_string(spine));
    auto j = nlohmann::json::parse(r.output, nullptr, false);
    return j.is_array() && !j.empty() ? j[0]["stats64"]["tx"]["bytes"].get<long>() : -1L;
  }
  // Packets leaf (a's) sent up each spine while host a sent 40 UDP datagrams to host b.
  std::vector<long> UplinkPackets(int a, int b) {
    auto count = [&](int s) {
      CliResult r = RunCli("ip -n " + name_ + "-l" + std::to_string(a / 2) + " -s -j link show s" +
                           std::to_string(s));
      auto j = nlohmann::json::parse(r.output, nullptr, false);
      return j.is_array() && !j.empty() ? j[0]["stats64"]["tx"]["packets"].get<long>() : -1L;
    };
    const long s0 = count(0), s1 = count(1);
    const std::string dst = "10.100." + std::to_string(b / 2) + "." + std::to_string(b % 2 + 1);
    RunCli("ip netns exec " + name_ + "-h" + std::to_string(a) +
           " python3 -c \"import socket\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
           "for p in range(40): s.sendto(b'x',('" +
           dst + "',9000+p))\"");
    return {count(0) - s0, count(1) - s1};
  }
  std::string name_;
};

TEST_F(EcmpKnown, TheModelsPathPerPairIsTheSpineTheLeafPicks) {
  Up("l3");
  auto c = NetworkYml();
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->leaf_spine.routes.size(), 8u);  // every ordered pair across the two leaves
  auto topology = sim::Topology::Create(*c);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  int used[2] = {0, 0};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      if (a / 2 == b / 2) continue;
      const int kernel = KernelSpine(a, b);
      ASSERT_GE(kernel, 0) << "h" << a << " -> h" << b;
      ++used[kernel];
      EXPECT_EQ(topology->FlowPaths(a, b), 1) << "h" << a << " -> h" << b;
      std::vector<int> route;
      topology->FlowRoute(a, b, 0, &route);
      ASSERT_EQ(route.size(), 4u);
      EXPECT_EQ(topology->LinkName(route[1]),
                "spines: leaf " + std::to_string(a / 2) + " -> spine " + std::to_string(kernel))
          << "h" << a << " -> h" << b;
      // And the packets really leave by it (a few of other traffic may cross either).
      const std::vector<long> sent = UplinkPackets(a, b);
      EXPECT_GE(sent[static_cast<size_t>(kernel)], 40) << "h" << a << " -> h" << b;
      EXPECT_LT(sent[static_cast<size_t>(1 - kernel)], 10) << "h" << a << " -> h" << b;
    }
  }
  std::cout << "pairs on spine 0: " << used[0] << ", on spine 1: " << used[1] << "\n";
}

TEST_F(EcmpKnown, WithPortsInTheHashThePairsStaySplit) {
  Up("l4");
  auto c = NetworkYml();
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->leaf_spine.routes.empty());
  auto topology = sim::Topology::Create(*c);
  ASSERT_TRUE(topology.ok());
  EXPECT_EQ(topology->FlowPaths(0, 2), 2);
}

// ECMP l4, one connection at a time: host 0 sends 2 MB to host 2 from each of 8 source ports
// it binds; the spine leaf 0 names for each 5-tuple (QueryConnectionSpines) is the one the bytes
// leave by (its uplink counters), and the 8 do not all take one spine (else the hash ignores
// the ports: the check would hold for any answer).
TEST_F(EcmpKnown, WithPortsInTheHashTheLeafNamesTheSpineAConnectionsBytesTake) {
  Up("l4");
  auto layout = testbed::Load(name_);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  // A sink on host 2 for the 8 connections, one after another (bounded: 60 s).
  RunCli("ip netns exec " + name_ +
         "-h2 timeout 60 python3 -c \"import socket\ns=socket.socket()\n"
         "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\ns.bind(('10.100.1.1',5201))\n"
         "s.listen(8)\nfor _ in range(8):\n  c,_=s.accept()\n  while c.recv(1<<16): pass\n"
         "  c.close()\n\" >/dev/null 2>&1 &");
  testbed::SystemShell shell;
  int on[2] = {0, 0};
  for (int i = 0; i < 8; ++i) {
    const int sport = 40101 + 7 * i;
    const std::vector<testbed::ConnectionFlow> flow = {
        {0, 2, i, "10.100.0.1:" + std::to_string(sport), "10.100.1.1:5201"}};
    auto spine = testbed::QueryConnectionSpines(*layout, flow, shell);
    ASSERT_TRUE(spine.ok()) << spine.status().message();
    ASSERT_EQ(spine->size(), 1u);
    const int s = (*spine)[0].spine;
    ++on[s];
    const long before[2] = {UplinkBytes(0, 0), UplinkBytes(0, 1)};
    // Sends, then waits for the sink's close: every byte has crossed before the counters.
    CliResult sent = RunCli(
        "ip netns exec " + name_ +
        "-h0 python3 -c \"import socket,time\nfor t in range(100):\n  s=socket.socket()\n"
        "  s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n  s.bind(('10.100.0.1'," +
        std::to_string(sport) +
        "))\n  try:\n    s.connect(('10.100.1.1',5201)); break\n  except OSError:\n"
        "    s.close(); time.sleep(0.05)\ns.sendall(b'x'*2000000)\ns.shutdown(socket.SHUT_WR)\n"
        "s.recv(1)\n\"");
    ASSERT_EQ(sent.exit_code, 0) << sent.output;
    const long up[2] = {UplinkBytes(0, 0) - before[0], UplinkBytes(0, 1) - before[1]};
    EXPECT_GE(up[s], 2000000) << "sport " << sport << ": leaf 0 named spine " << s;
    EXPECT_LT(up[1 - s], 200000) << "sport " << sport << ": leaf 0 named spine " << s;
  }
  std::cout << "connections on spine 0: " << on[0] << ", on spine 1: " << on[1] << "\n";
  EXPECT_GT(on[0], 0);
  EXPECT_GT(on[1], 0);
}

// ECMP l4: a 4-rank direct all-to-all (rank i on host i: each host sends 8 MiB to each host of
// the other leaf on its own connection) with --predict. Its connections' spines, asked with
// their ports, are what the prediction routes them on (results.json says how many), what the
// model's path of each connection takes, and where the bytes went: each leaf's bytes up each
// spine are the bytes of the connections on that spine (within 10 % of the leaf's total: the
// counters see headers, the other direction's ACKs and the harness's small messages).
TEST_F(EcmpKnown, WithPortsInTheHashEachConnectionTakesTheSpineItsLeafNames) {
  Up("l4");
  const std::string dir = FreshDir("ecmp-l4-" + name_);
  const std::string system = dir + "/direct.json";
  std::ofstream(system) << R"({"scheduling-policy": "LIFO", "endpoint-delay": 10,
    "active-chunks-per-dimension": 1, "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"], "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"], "all-to-all-implementation": ["direct"],
    "collective-optimization": "baseline", "local-mem-bw": 50, "boost-mode": 0})";
  CliResult g = RunCli(
      Genie("gen collective --type all_to_all --size 32MiB --ranks 4 -o " + dir + "/w"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  long before[2][2];
  for (int l = 0; l < 2; ++l) {
    for (int s = 0; s < 2; ++s) before[l][s] = UplinkBytes(l, s);
  }
  CliResult run = RunCli(Genie("launch --testbed " + name_ + " -n 4 -- run " + dir +
                               "/w -n 2 --warmup 0 --predict --system " + system + " -o " + dir +
                               "/out"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  long sent[2][2];
  for (int l = 0; l < 2; ++l) {
    for (int s = 0; s < 2; ++s) sent[l][s] = UplinkBytes(l, s) - before[l][s];
  }
  const auto results =
      nlohmann::json::parse(ReadFile(dir + "/out/results.json"), nullptr, false);
  ASSERT_TRUE(results.is_object());
  const nlohmann::json& info = results["provenance"];
  ASSERT_TRUE(info.contains("connections")) << info.dump();
  ASSERT_EQ(info["connections"].size(), 4u);  // one record per rank
  // Every cross-leaf direction (8: each host to both of the other leaf's) has its spine.
  const std::vector<testbed::ConnectionFlow> flows = driver::RecordedFlows(info["connections"]);
  EXPECT_EQ(flows.size(), 12u);  // 4 ranks x 3 peers, one channel
  std::string note;
  const std::vector<config::EcmpConnection> spines =
      driver::ConnectionSpines(name_, info["connections"], &note);
  ASSERT_EQ(spines.size(), 8u) << note;
  EXPECT_NE(results["prediction"].dump().find("ECMP l4: 8 connection direction(s)"),
            std::string::npos)
      << results["prediction"].dump();
  // The model's path of each connection goes up its spine.
  auto c = NetworkYml();
  ASSERT_TRUE(c.ok()) << c.status().message();
  c->leaf_spine.connections = spines;
  auto topology = sim::Topology::Create(*c);
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  // Bytes each rank sent each peer (one connection each).
  std::map<std::pair<int, int>, double> bytes;
  for (const auto& t : info["traffic"]) {
    for (const auto& p : t["peers"]) {
      bytes[{t["rank"].get<int>(), p["peer"].get<int>()}] +=
          p["socket_bytes_sent"].get<double>();
    }
  }
  double expected[2][2] = {{0, 0}, {0, 0}};
  for (const config::EcmpConnection& e : spines) {
    EXPECT_EQ(topology->FlowPaths(e.src, e.dst, e.channel), 1);
    std::vector<int> route;
    topology->FlowRoute(e.src, e.dst, 0, &route, e.channel);
    ASSERT_EQ(route.size(), 4u);
    EXPECT_EQ(topology->LinkName(route[1]), "spines: leaf " + std::to_string(e.src / 2) +
                                                " -> spine " + std::to_string(e.spine));
    expected[e.src / 2][e.spine] += bytes[{e.src, e.dst}];
  }
  for (int l = 0; l < 2; ++l) {
    const double total = static_cast<double>(sent[l][0] + sent[l][1]);
    const double want = expected[l][0] + expected[l][1];
    ASSERT_GT(want, 4.0 * (32 << 20) / 4);  // its 4 directions' bytes, at least
    EXPECT_NEAR(static_cast<double>(sent[l][0]) / total, expected[l][0] / want, 0.1)
        << "leaf " << l << ": sent " << sent[l][0] << " / " << sent[l][1]
        << " bytes up spine 0 / 1, its connections on them " << expected[l][0] << " / "
        << expected[l][1];
    std::cout << "leaf " << l << ": up spine 0 / 1 " << sent[l][0] << " / " << sent[l][1]
              << " bytes; its connections' " << expected[l][0] << " / " << expected[l][1] << "\n";
  }
}

}  // namespace
}  // namespace genie::testing
