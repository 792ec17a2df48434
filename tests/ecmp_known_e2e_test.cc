// Known-hash ECMP on a real testbed, as root: leafspine:2x2x2 with `--hash l3`. The network.yml
// `genie testbed network-yml` writes pins every pair of hosts across leaves to a spine
// (`ecmp_routes`), and the flow model's path for that pair (Topology::FlowRoute) goes up that
// spine — the one `ip route get DST from SRC iif br0` in the source's leaf names, and the one a
// burst of UDP datagrams really leaves by (the leaf's uplink counters). With `--hash l4` the
// pairs are not pinned (split). Needs root; skips otherwise; the testbeds are taken down also
// when a check fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "genie/config/network_config.h"
#include "genie/sim/topology.h"
#include "tests/support/cli.h"
#include "tests/support/skip.h"

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

}  // namespace
}  // namespace genie::testing
