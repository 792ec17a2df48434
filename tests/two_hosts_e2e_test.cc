// Two "hosts" on one machine — two network namespaces joined by a veth pair, like two servers
// on one link — with 4 ranks each, launched per host as on a cluster (genie launch --nnodes 2
// --node-rank K, store on rank 0). With the intra-host dimension modelled, only inter-host
// traffic crosses the sockets: counted at both layers (genie's socket counters and the veth's
// kernel byte counters); each host writes its own results and `genie results merge` makes one
// timeline. A link that goes down and comes back within --peer-timeout only stalls the run.
// Needs root (network namespaces); skips with a message otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/port.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

// Namespaces gA<pid>/gB<pid>, veth vA<pid> (10.213.0.1) <-> vB<pid> (10.213.0.2).
class TwoHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(RootMissing("create network namespaces"));
    const std::string id = std::to_string(getpid() % 100000);
    ns_[0] = "gA" + id;
    ns_[1] = "gB" + id;
    veth_[0] = "vA" + id;
    veth_[1] = "vB" + id;
    CliResult r = RunCli(
        "ip netns add " + ns_[0] + " && ip netns add " + ns_[1] + " && ip link add " + veth_[0] +
        " type veth peer name " + veth_[1] + " && ip link set " + veth_[0] + " netns " + ns_[0] +
        " && ip link set " + veth_[1] + " netns " + ns_[1] + " && ip -n " + ns_[0] + " addr add " +
        addr_[0] + "/24 dev " + veth_[0] + " && ip -n " + ns_[1] + " addr add " + addr_[1] +
        "/24 dev " + veth_[1] + " && ip -n " + ns_[0] + " link set " + veth_[0] + " up && ip -n " +
        ns_[1] + " link set " + veth_[1] + " up && ip -n " + ns_[0] + " link set lo up && ip -n " +
        ns_[1] + " link set lo up");
    if (r.exit_code != 0) {
      TearDown();
      GTEST_SKIP() << "cannot create network namespaces here: " << r.output;
    }
    created_ = true;
    dir_ = FreshDir("two-hosts");
    std::ofstream(dir_ + "/host.yml") << "topology: [ Switch ]\nnpus_count: [ 4 ]\n"
                                         "bandwidth: [ 900.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n";
  }
  void TearDown() override {
    for (const Child& c : children_) {  // a failed test must not leave ranks running
      Signal(c, SIGKILL);
      WaitExit(c, 5);
    }
    if (!ns_[0].empty())
      RunCli("ip netns del " + ns_[0] + " 2>/dev/null; ip netns del " + ns_[1] + " 2>/dev/null");
  }

  // Host h's launcher: 4 ranks of 8, store on rank 0 (host 0); host 0 binds its address,
  // host 1 names its NIC (--bind takes either).
  std::string Host(int h, int port, const std::string& run_args) const {
    return "ip netns exec " + ns_[h] + " " + GenieBinary() +
           " launch -n 4 --nnodes 2 --node-rank " + std::to_string(h) +
           " --rendezvous tcp:" + addr_[0] + ":" + std::to_string(port) + " -- run " + run_args +
           " --bind " + (h == 0 ? addr_[0] : veth_[1]) + " -o " + dir_ + "/host" +
           std::to_string(h);
  }
  Child Start(const std::string& command, const std::string& log) {
    children_.push_back(Spawn(command, log));
    return children_.back();
  }
  uint64_t VethTxBytes(int h) const {
    CliResult r = RunCli("ip netns exec " + ns_[h] + " cat /sys/class/net/" + veth_[h] +
                         "/statistics/tx_bytes");
    return std::stoull(r.output);
  }

  std::string ns_[2], veth_[2];
  const std::string addr_[2] = {"10.213.0.1", "10.213.0.2"};
  std::string dir_;
  bool created_ = false;
  std::vector<Child> children_;
};

TEST_F(TwoHosts, OnlyInterHostTrafficCrossesTheNetworkAndResultsMergeIntoOneTimeline) {
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 8MiB --ranks 8 -o " +
                   dir_ + "/w")
                .exit_code,
            0);
  const uint64_t tx0 = VethTxBytes(0) + VethTxBytes(1);
  const int port = FreeTcpPort();
  const std::string args = dir_ + "/w --iterations 3 --intra-host " + dir_ +
                           "/host.yml --peer-timeout 20s --clock-sync always";
  Child h0 = Start(Host(0, port, args), dir_ + "/host0.log");
  Child h1 = Start(Host(1, port, args), dir_ + "/host1.log");
  auto c0 = WaitExit(h0, 120), c1 = WaitExit(h1, 120);
  ASSERT_TRUE(c0 && c1) << ReadLog(h0) << ReadLog(h1);
  ASSERT_EQ(*c0, 0) << ReadLog(h0);
  ASSERT_EQ(*c1, 0) << ReadLog(h1);
  const uint64_t veth = VethTxBytes(0) + VethTxBytes(1) - tx0;

  // Per rank and peer: what genie sent on sockets, what the model carried.
  uint64_t inter = 0, modelled = 0;
  for (int r = 0; r < 8; ++r) {
    const std::string stream =
        dir_ + "/host" + std::to_string(r / 4) + "/rank-" + std::to_string(r) + ".jsonl";
    std::ifstream in(stream);
    std::string line;
    bool seen = false;
    while (std::getline(in, line)) {
      json j = json::parse(line);
      if (j.value("record", "") != "traffic") continue;
      seen = true;
      for (const auto& p : j["peers"]) {
        const int peer = p["peer"];
        if (peer / 4 == r / 4) {
          EXPECT_EQ(p["socket_bytes_sent"].get<uint64_t>(), 0u) << "rank " << r << " -> " << peer;
          // The ring's payload goes to the next rank; other peers on the host may carry only
          // the iteration barrier's zero-byte release (a tree from rank 0).
          if (peer == (r + 1) % 8) {
            EXPECT_GT(p["modelled_bytes_sent"].get<uint64_t>(), 0u)
                << "rank " << r << " -> " << peer;
          }
          modelled += p["modelled_bytes_sent"].get<uint64_t>();
        } else {
          EXPECT_EQ(p["socket_bytes_sent"], p["network_bytes_sent"])
              << "rank " << r << " -> " << peer;
          EXPECT_EQ(p["modelled_bytes_sent"].get<uint64_t>(), 0u);
          inter += p["network_bytes_sent"].get<uint64_t>();
        }
      }
    }
    EXPECT_TRUE(seen) << stream << " has no traffic record";
  }
  // Ring all-reduce, 8 ranks, hosts of 4: 2 of the 8 ring links cross hosts.
  const uint64_t per_link =
      3ull * 2 * 7 * (8ull << 20) / 8;  // iterations (incl. none warm) x 2(N-1)/N x S
  EXPECT_EQ(inter, 2 * per_link);
  EXPECT_EQ(modelled, 6 * per_link);
  // The kernel agrees: the link carried the inter-host payload plus headers, ACKs and the
  // rendezvous — and nothing like the 3x larger intra-host payload.
  EXPECT_GE(veth, inter);
  EXPECT_LE(veth, inter + inter / 10 + (2u << 20))
      << "veth bytes " << veth << ", inter-host payload " << inter;

  // Each host wrote its own results; merged, they make one 8-rank timeline on rank 0's clock.
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/host0/results.json")) << ReadLog(h0);
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/host1/results.json")) << ReadLog(h1);
  CliResult m = RunCli(GenieBinary() + " results merge " + dir_ + "/merged.json " + dir_ +
                       "/host0 " + dir_ + "/host1");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_NE(m.output.find("8 ranks"), std::string::npos) << m.output;
  CliResult show = RunCli(GenieBinary() + " results show " + dir_ + "/merged.json");
  EXPECT_NE(show.output.find("# traffic, total over the run: " + std::to_string(inter >> 20) + " MiB over the network"),
            std::string::npos)
      << show.output;
  json merged = json::parse(ReadFile(dir_ + "/merged.json"));
  ASSERT_EQ(merged["clock_offsets_ns"].size(), 8u) << merged["clock_offsets_ns"].dump();
  // One machine, so the true offsets are 0 and what the ping-pong estimated is its error: at
  // most half the round trip it was measured with (rank 0 stamps its reply between our send
  // and our receive), however busy the machine. The merge applies one of these estimates.
  long long max_rtt = 0;
  for (int r = 0; r < 8; ++r) {
    std::istringstream stream(
        ReadFile(dir_ + "/host" + std::to_string(r / 4) + "/rank-" + std::to_string(r) + ".jsonl"));
    bool seen = false;
    for (std::string line; std::getline(stream, line);) {
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || j.value("record", "") != "clock") continue;
      seen = true;
      const long long rtt = j.value("rtt_ns", 0LL), offset = j.value("offset_ns", 0LL);
      EXPECT_LE(std::llabs(offset), rtt / 2 + 1) << "rank " << r << ": " << line;
      max_rtt = std::max(max_rtt, rtt);
    }
    EXPECT_TRUE(seen) << "rank " << r << " has no clock record";
  }
  for (const auto& [rank, offset] : merged["clock_offsets_ns"].items()) {
    EXPECT_LE(std::llabs(offset.get<long long>()), max_rtt / 2 + 1) << "rank " << rank;
  }
  const std::string stream5 = ReadFile(dir_ + "/host1/rank-5.jsonl");
  EXPECT_NE(stream5.find("\"samples\":16"), std::string::npos) << stream5.substr(0, 2000);
  json trace = json::parse(ReadFile(dir_ + "/merged.trace.json"));
  std::set<int> pids;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "X") pids.insert(e.value("pid", -1));
  }
  EXPECT_EQ(pids.size(), 8u);
}

TEST_F(TwoHosts, ALinkThatGoesDownAndComesBackWithinTheTimeoutOnlyStallsTheRun) {
  ASSERT_EQ(RunCli(GenieBinary() + " gen collective --type all_reduce --size 4MiB --ranks 8 -o " +
                   dir_ + "/w")
                .exit_code,
            0);
  const int port = FreeTcpPort();
  const std::string args =
      dir_ + "/w --iterations 100 --intra-host " + dir_ + "/host.yml --peer-timeout 6s";
  Child h0 = Start(Host(0, port, args), dir_ + "/host0.log");
  Child h1 = Start(Host(1, port, args), dir_ + "/host1.log");
  // Once traffic flows, take the link down for 1.5 s. 100 iterations (~1.5 s of traffic on an
  // idle machine) outlast the moment between seeing traffic and the link going down; from then
  // on the outage itself holds the run (every iteration crosses the link).
  bool flowing = false;
  for (int i = 0; i < 1500 && !flowing; ++i) {
    flowing = ReadFile(dir_ + "/host1/rank-4.jsonl").find("\"record\":\"op\"") != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(flowing) << ReadLog(h0) << ReadLog(h1);
  ASSERT_EQ(RunCli("ip -n " + ns_[0] + " link set " + veth_[0] + " down").exit_code, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(RunCli("ip -n " + ns_[0] + " link set " + veth_[0] + " up").exit_code, 0);
  // Both hosts were mid-run through the whole outage (their traffic needs the link).
  EXPECT_FALSE(WaitExit(h0, 0).has_value());
  EXPECT_FALSE(WaitExit(h1, 0).has_value());
  auto c0 = WaitExit(h0, 180), c1 = WaitExit(h1, 180);
  ASSERT_TRUE(c0 && c1) << ReadLog(h0) << ReadLog(h1);
  EXPECT_EQ(*c0, 0) << ReadLog(h0);
  EXPECT_EQ(*c1, 0) << ReadLog(h1);
}

}  // namespace
}  // namespace genie::testing
