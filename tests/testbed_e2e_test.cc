// genie testbed end to end, as root on this machine: real namespaces, bridges, routers, tbf,
// iptables and the NFQUEUE delay helper, real genie ranks and iperf3 over them. Links are
// shaped at 400 Mbit/s or less (CI machines have 2 cores; 1 Gbit/s figures are in
// bench/testbed_allreduce.sh). Every test checks that nothing is left behind: no namespace, no
// helper process (namespaces take their links, qdiscs and iptables rules with them).
// Needs root; skips with a message otherwise.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using nlohmann::json;

class Testbed : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(NamespacesMissing());
    // A killed earlier run of these tests could not take its testbed down: do it now (every
    // testbed named t<pid> whose process is gone).
    CliResult old = RunCli("ip netns list 2>/dev/null | grep -o '^t[0-9]*-' | sort -u | tr -d -");
    std::istringstream names(old.output);
    for (std::string n; names >> n;) {
      if (kill(std::stoi(n.substr(1)), 0) != 0)
        RunCli(Genie("testbed down " + n) + " >/dev/null 2>&1");
    }
    name_ = "t" + std::to_string(getpid());
    dir_ = FreshDir("testbed-" + name_);
  }
  void TearDown() override {
    if (name_.empty()) return;
    // Runs and `fault clear` stop their delay helpers: none is left in the testbed.
    EXPECT_EQ(RunCli("for ns in $(ip netns list 2>/dev/null | grep -o '^" + name_ +
                     "-[a-z0-9]*'); do ip netns pids $ns 2>/dev/null; done | xargs -r ps -o "
                     "args= -p | grep -c netdelay || true")
                  .output,
              "0\n");
    RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
    // Nothing of the testbed is left: namespaces, and with them links, qdiscs and rules.
    EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output,
              "0\n");
  }
  void Up(const std::string& args) {
    CliResult r = RunCli(Genie("testbed up --name " + name_ + " " + args));
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  std::string Ns(const std::string& node) const { return name_ + "-" + node; }
  // The star:4 fault tests' faults (h1 at 50mbit, a loss rule on h2) are gone within `seconds`:
  // h1 shaped to its 400mbit again, h2's PREROUTING chain holding only its policy.
  bool FaultsCleared(int seconds) const {
    for (int i = 0; i < seconds * 10; ++i) {
      if (RunCli("tc -n " + Ns("h1") + " qdisc show dev eth0").output.find("400Mbit") !=
              std::string::npos &&
          RunCli("ip netns exec " + Ns("h2") + " iptables -t mangle -S PREROUTING | wc -l")
                  .output == "1\n") {
        return true;
      }
      usleep(100'000);
    }
    return false;
  }
  // iperf3 goodput from host `from` to host `to` (bytes/s, as received).
  double Iperf(int from, int to, double seconds = 2) {
    const std::string addr = "10.100.0." + std::to_string(to + 1);
    RunCli("ip netns exec " + Ns("h" + std::to_string(to)) + " iperf3 -s -1 -D -B " + addr +
           " >/dev/null 2>&1; sleep 0.3");
    CliResult r = RunCli("ip netns exec " + Ns("h" + std::to_string(from)) + " iperf3 -c " + addr +
                             " -t " + std::to_string(seconds) + " -J",
                         Stderr::kApart);
    if (r.exit_code != 0) return 0;
    return json::parse(r.output)["end"]["sum_received"]["bits_per_second"].get<double>() / 8;
  }
  // `genie launch --testbed` of a generated collective; returns the exit code and the output.
  CliResult Run(const std::string& gen, int ranks, const std::string& run_args,
                const std::string& out = "out") {
    const std::string w = dir_ + "/w-" + out;
    CliResult g =
        RunCli(Genie("gen collective " + gen + " --ranks " + std::to_string(ranks) + " -o " + w));
    EXPECT_EQ(g.exit_code, 0) << g.output;
    return RunCli(Genie("launch --testbed " + name_ + " -n " + std::to_string(ranks) + " -- run " +
                        w + " -o " + dir_ + "/" + out + " " + run_args));
  }
  json Results(const std::string& out = "out") {
    return json::parse(ReadFile(dir_ + "/" + out + "/results.json"));
  }
  // Per measured iteration, the slowest rank's bus bandwidth of the collectives (bytes/s).
  static std::vector<double> BusBwPerIteration(const json& results) {
    std::map<int, double> worst;
    for (const auto& c : results["collectives"]) {
      const int it = c["iteration"];
      const double bw = c["busbw_gbps"].get<double>() * 1e9;
      auto [pos, fresh] = worst.emplace(it, bw);
      if (!fresh) pos->second = std::min(pos->second, bw);
    }
    std::vector<double> out;
    for (const auto& [it, bw] : worst) out.push_back(bw);
    return out;
  }
  static double Median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  static json HostCounters(const json& results, const std::string& host) {
    for (const auto& h : results["provenance"]["testbed"]["counters"]["hosts"]) {
      if (h["host"] == host) return h;
    }
    return json();
  }

  std::string name_, dir_;
};

TEST_F(Testbed, UpStatusListDownAndNothingIsLeft) {
  Up("--topology star:3 --rate 200mbit --nics 2");
  CliResult list = RunCli(Genie("testbed list"));
  EXPECT_NE(list.output.find(name_), std::string::npos) << list.output;
  CliResult st = RunCli(Genie("testbed status " + name_ + " --json"), Stderr::kApart);
  ASSERT_EQ(st.exit_code, 0) << st.errors;
  json j = json::parse(st.output);
  EXPECT_EQ(j["hosts"].size(), 3u);
  EXPECT_EQ(j["links"].size(), 6u);
  EXPECT_EQ(j["hosts"][2]["nics"][1]["address"], "10.101.0.3");
  // Both ends of every link shaped at the rate: the switch's port one tbf, the host's NIC a tbf
  // holding the htb that sends its ACKs first, with the ACKs' and the bulk's FIFOs.
  CliResult tc = RunCli("tc -n " + Ns("h1") + " qdisc show dev eth1; tc -n " + Ns("sw") +
                        " qdisc show dev h1n1");
  EXPECT_EQ(std::count(tc.output.begin(), tc.output.end(), '\n'), 5) << tc.output;
  auto count = [&](const std::string& what) {
    int n = 0;
    for (size_t at = tc.output.find(what); at != std::string::npos; at = tc.output.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("tbf"), 2) << tc.output;
  EXPECT_EQ(count("rate 200Mbit"), 2) << tc.output;
  EXPECT_EQ(count("qdisc htb 2: parent 1:1"), 1) << tc.output;
  // The same name twice is refused; nothing is changed.
  CliResult again = RunCli(Genie("testbed up --name " + name_ + " --topology star:2"));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.output.find("exists"), std::string::npos) << again.output;
  // The ASTRA-sim view of it.
  CliResult yml = RunCli(Genie("testbed network-yml " + name_));
  EXPECT_NE(yml.output.find("npus_count: [ 3 ]"), std::string::npos) << yml.output;
  ASSERT_EQ(RunCli(Genie("testbed down " + name_)).exit_code, 0);
  EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output, "0\n");
  EXPECT_EQ(RunCli(Genie("testbed status " + name_)).exit_code, 2);
  // Nor its files in the state directory (the name's lock included).
  EXPECT_EQ(RunCli("ls /run/genie/testbeds | grep -c '^" + name_ + "\\.' || true").output, "0\n");
}

TEST_F(Testbed, WithoutRootItSaysSoAndChangesNothing) {
  CliResult r = RunCli("setpriv --reuid=65534 --regid=65534 --clear-groups " +
                       Genie("testbed up --name " + name_ + " --topology star:2"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("needs root"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was changed"), std::string::npos) << r.output;
  EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output, "0\n");
}

TEST_F(Testbed, AFailedUpRemovesWhatItMade) {
  // A `tc` that fails on host 2's NIC: `up` fails half way, after namespaces and links exist.
  const std::string bin = dir_ + "/bin";
  RunCli("mkdir -p " + bin);
  std::ofstream(bin + "/tc") << "#!/bin/sh\ncase \"$*\" in *" << Ns("h2")
                             << "*) echo 'tc: injected failure' >&2; exit 1;; esac\n"
                                "exec /usr/sbin/tc \"$@\"\n";
  RunCli("chmod +x " + bin + "/tc");
  CliResult r = RunCli("PATH=" + bin + ":$PATH " +
                       Genie("testbed up --name " + name_ + " --topology star:4"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("injected failure"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("everything it had made was removed"), std::string::npos) << r.output;
  EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output, "0\n");
  EXPECT_EQ(RunCli(Genie("testbed list")).output.find(name_), std::string::npos);
  EXPECT_EQ(RunCli("ls /run/genie/testbeds | grep -c '^" + name_ + "\\.' || true").output, "0\n");
}

// The hosts' congestion control is the one asked for (one this machine does not default to,
// so its namespaces must be allowed it), and genie's connections use it; a name the kernel
// lacks is refused before anything is built.
TEST_F(Testbed, TheHostsRunTheCongestionControlAskedFor) {
  auto first_word = [](const std::string& text) {
    std::istringstream in(text);
    std::string w;
    in >> w;
    return w;
  };
  const std::string machine = first_word(ReadFile("/proc/sys/net/ipv4/tcp_congestion_control"));
  const std::string want = machine == "cubic" ? "reno" : "cubic";
  CliResult bad = RunCli(
      Genie("testbed up --name " + name_ + " --topology star:2 " + "--tcp-congestion nosuchcc"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("this kernel has no 'nosuchcc' (available: "), std::string::npos)
      << bad.output;
  EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output, "0\n");

  Up("--topology star:2 --rate 400mbit --tcp-congestion " + want);
  EXPECT_EQ(
      RunCli("ip netns exec " + Ns("h1") + " sysctl -n net.ipv4.tcp_congestion_control").output,
      want + "\n");
  EXPECT_EQ(first_word(ReadFile("/proc/sys/net/ipv4/tcp_congestion_control")), machine)
      << "the machine's own default is left alone";
  CliResult st = RunCli(Genie("testbed status " + name_));
  EXPECT_NE(st.output.find("TCP " + want), std::string::npos) << st.output;
  // A run records the congestion control its ranks' namespaces have.
  CliResult g =
      RunCli(Genie("gen collective --type all_reduce --size 1MiB --ranks 2 -o " + dir_ + "/ar"));
  ASSERT_EQ(g.exit_code, 0) << g.output;
  CliResult r = RunCli(
      Genie("launch --testbed " + name_ + " -n 2 -- run " + dir_ + "/ar -o " + dir_ + "/out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string header = ReadFile(dir_ + "/out/rank-1.jsonl");
  EXPECT_NE(header.find("\"net.ipv4.tcp_congestion_control\":\"" + want + "\""), std::string::npos)
      << header.substr(0, 2000);
}

// Calibrations under two congestion controls are kept side by side; `network-yml` takes the one
// measured under the settings a run would have (the hosts' own, or --tcp-congestion on the
// sockets), and says when none was and the latest stands in.
TEST_F(Testbed, NetworkYmlTakesTheCalibrationOfTheSettingsARunWouldHave) {
  Up("--topology star:2 --rate 1gbit --tcp-congestion cubic");
  auto yml = [&](const std::string& flags) {
    CliResult r = RunCli(Genie("testbed network-yml " + name_ + " " + flags), Stderr::kApart);
    EXPECT_EQ(r.exit_code, 0) << r.errors;
    EXPECT_NE(r.output.find("goodput: [ "), std::string::npos) << r.output;
    return r.errors;
  };
  ASSERT_EQ(RunCli(Genie("testbed calibrate " + name_)).exit_code, 0);
  EXPECT_EQ(yml("").find("stands in"), std::string::npos) << yml("");
  const std::string reno = yml("--tcp-congestion reno");
  EXPECT_NE(reno.find("none of its 1 calibration(s) was measured under its settings now"),
            std::string::npos)
      << reno;
  EXPECT_NE(reno.find("tcp_congestion reno"), std::string::npos) << reno;
  CliResult cal = RunCli(Genie("testbed calibrate " + name_ + " --tcp-congestion reno"));
  ASSERT_EQ(cal.exit_code, 0) << cal.output;
  EXPECT_EQ(yml("--tcp-congestion reno").find("stands in"), std::string::npos);
  EXPECT_EQ(yml("").find("stands in"), std::string::npos);
  const json saved = json::parse(ReadFile("/run/genie/testbeds/" + name_ + ".calibration.json"));
  EXPECT_NE(saved.dump().find("cubic"), std::string::npos) << "both kept: " << saved.dump();
}

TEST_F(Testbed, StarRingAllReduceReachesTheLinkGoodput) {
  Up("--topology star:8 --rate 400mbit");
  const double iperf = Iperf(0, 1);
  ASSERT_GT(iperf, 40e6);
  CliResult r =
      Run("--type all_reduce --size 64MiB", 8, "--iterations 3 --warmup 1 --peer-timeout 30s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json res = Results();
  const double busbw = Median(BusBwPerIteration(res));
  RecordProperty("busbw_over_iperf3", std::to_string(busbw / iperf));
  std::cout << "star:8 at 400mbit, 64 MiB ring all-reduce: busbw " << busbw / 1e9
            << " GB/s, iperf3 " << iperf / 1e9 << " GB/s, ratio " << busbw / iperf << "\n";
  EXPECT_GE(busbw / iperf, 0.90) << "busbw " << busbw << " B/s, iperf3 " << iperf << " B/s";
  // Rank 0 recorded the testbed's counters: every host's NIC carried the ring's traffic.
  json h3 = HostCounters(res, "h3");
  ASSERT_FALSE(h3.is_null()) << res["provenance"].dump();
  CliResult show = RunCli(Genie("results show " + dir_ + "/out/results.json"));
  EXPECT_NE(show.output.find("# testbed " + name_ + " (star:8, 400mbit)"), std::string::npos)
      << show.output;
}

TEST_F(Testbed, LeafSpineSpreadsCrossLeafFlowsOverBothSpines) {
  Up("--topology leafspine:2x2x4 --rate 400mbit --hash l4");
  auto spine_tx = [&](int s) {
    uint64_t sum = 0;
    for (int l = 0; l < 2; ++l) {
      sum +=
          std::stoull(RunCli("ip netns exec " + Ns("s" + std::to_string(s)) +
                             " cat /sys/class/net/l" + std::to_string(l) + "/statistics/tx_bytes")
                          .output);
    }
    return sum;
  };
  const uint64_t s0 = spine_tx(0), s1 = spine_tx(1);
  // 64 cross-leaf TCP flows: 32 from h0 to h4 and 32 from h5 to h1, at once. The hash puts each
  // on a spine at random, and TCP shares a link unevenly over 2 s, so the bytes are judged with
  // a margin: each spine carries at least a fifth (32 flows against a floor of a quarter failed
  // once, 0.79 / 0.21).
  RunCli("ip netns exec " + Ns("h4") +
         " iperf3 -s -1 -D -B 10.100.1.1 >/dev/null 2>&1; ip netns exec " + Ns("h1") +
         " iperf3 -s -1 -D -B 10.100.0.2 >/dev/null 2>&1; sleep 0.3");
  CliResult r =
      RunCli("ip netns exec " + Ns("h0") + " iperf3 -c 10.100.1.1 -t 2 -P 32 >/dev/null & " +
             "ip netns exec " + Ns("h5") + " iperf3 -c 10.100.0.2 -t 2 -P 32 >/dev/null; wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const double d0 = static_cast<double>(spine_tx(0) - s0),
               d1 = static_cast<double>(spine_tx(1) - s1);
  const double cross = d0 + d1;
  ASSERT_GT(cross, 50e6) << "cross-leaf bytes " << cross;
  std::cout << "leafspine:2x2x4, 64 iperf3 flows: spine 0 carried " << d0 / cross << ", spine 1 "
            << d1 / cross << " of " << cross / 1e6 << " MB cross-leaf\n";
  EXPECT_GE(d0 / cross, 0.2) << d0 << " vs " << d1;
  EXPECT_GE(d1 / cross, 0.2) << d0 << " vs " << d1;
  // genie's own traffic crosses the fabric over the routed path too.
  CliResult g = Run("--type all_to_all --size 8MiB", 8, "--channels 2 --peer-timeout 30s");
  ASSERT_EQ(g.exit_code, 0) << g.output;
}

// A leaf-spine link serves the hosts sending through it in turn (htb, a class per host): four
// TCP flows from the hosts of leaf 0 to those of leaf 1 get equal shares of the spine, whatever
// their congestion control makes of a deep queue, and together nearly all of it.
TEST_F(Testbed, LeafSpineLinksShareTheSpineEquallyAmongSendingHosts) {
  Up("--topology leafspine:2x1x4 --rate 400mbit --spine-rate 100mbit");
  std::string servers, clients;
  for (int i = 0; i < 4; ++i) {
    const std::string addr = "10.100.1." + std::to_string(i + 1);
    servers += "ip netns exec " + Ns("h" + std::to_string(4 + i)) + " iperf3 -s -1 -D -B " + addr +
               " >/dev/null 2>&1; ";
    clients += "ip netns exec " + Ns("h" + std::to_string(i)) + " iperf3 -c " + addr +
               " -t 4 -J > " + dir_ + "/flow" + std::to_string(i) + ".json & ";
  }
  RunCli(servers + "sleep 0.3");
  ASSERT_EQ(RunCli(clients + "wait").exit_code, 0);
  std::vector<double> mbps;
  for (int i = 0; i < 4; ++i) {
    const json j = json::parse(ReadFile(dir_ + "/flow" + std::to_string(i) + ".json"));
    mbps.push_back(j["end"]["sum_received"]["bits_per_second"].get<double>() / 1e6);
  }
  const auto [lo, hi] = std::minmax_element(mbps.begin(), mbps.end());
  double total = 0;
  for (double m : mbps) total += m;
  std::cout << "leafspine:2x1x4, 100 Mbit/s spine, 4 flows across it: " << mbps[0] << " / "
            << mbps[1] << " / " << mbps[2] << " / " << mbps[3] << " Mbit/s\n";
  // One FIFO gave bbr flows 23-222 Mbit/s of a 500 Mbit/s spine (docs/testbed.md); per host they
  // got 117 each.
  EXPECT_GT(*lo / *hi, 0.8) << *lo << " vs " << *hi;
  EXPECT_GT(total, 85) << total;
  EXPECT_LT(total, 101) << total;
}

// A host sending and receiving at once owes its peer ACKs. Behind one FIFO (--host-sched fifo)
// they wait out the host's own queued data, and the peer's round trip carries that queue;
// ack-first (the default) sends them before it, as a host with fq does. Here h0 sends a bulk
// cubic flow to h1 (filling h0's queue) while h1 sends h0 10 Mbit/s (no queue of its own): that
// flow's round trip is h0's queue with one FIFO and next to nothing with ACKs first. The run
// records the setting.
TEST_F(Testbed, HostsSendTheirAcksBeforeTheirOwnQueuedData) {
  // Mean round trip (ms) of the light flow h1 -> h0, as its sender saw it.
  auto light_flow_rtt_ms = [&]() {
    RunCli("ip netns exec " + Ns("h1") + " iperf3 -s -1 -D -B 10.100.0.2 >/dev/null 2>&1; " +
           "ip netns exec " + Ns("h0") + " iperf3 -s -1 -D -B 10.100.0.1 >/dev/null 2>&1; sleep 0.3");
    // Both clients must succeed: the bulk one's status too, through its pid.
    const CliResult r = RunCli(
        "ip netns exec " + Ns("h0") + " iperf3 -c 10.100.0.2 -t 4 >/dev/null & bulk=$!; sleep 0.5; " +
        "ip netns exec " + Ns("h1") + " iperf3 -c 10.100.0.1 -b 10M -t 3 -J > " + dir_ +
        "/light.json; light=$?; wait $bulk && exit $light");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json j = json::parse(ReadFile(dir_ + "/light.json"));
    return j["end"]["streams"][0]["sender"]["mean_rtt"].get<double>() / 1e3;  // µs
  };
  Up("--topology star:2 --rate 100mbit --tcp-congestion cubic --host-sched fifo");
  EXPECT_EQ(RunCli("tc -n " + Ns("h0") + " qdisc show dev eth0").output.find("htb"), std::string::npos)
      << "fifo: one tbf";
  const double fifo_ms = light_flow_rtt_ms();
  RunCli(Genie("testbed down " + name_) + " >/dev/null");
  Up("--topology star:2 --rate 100mbit --tcp-congestion cubic");
  const double ack_first_ms = light_flow_rtt_ms();
  // The ACKs went through the first-served class: its FIFO (10:) sent packets on both hosts.
  for (const char* h : {"h0", "h1"}) {
    const json qdiscs =
        json::parse(RunCli("tc -n " + Ns(h) + " -s -j qdisc show dev eth0").output);
    uint64_t ack_packets = 0;
    for (const auto& q : qdiscs) {
      if (q.value("handle", "") == "10:") ack_packets = q.value("packets", 0ull);
    }
    EXPECT_GT(ack_packets, 100u) << h << ": " << qdiscs.dump();
  }
  std::cout << "star:2, 100 Mbit/s, cubic: h1 -> h0 at 10 Mbit/s beside h0 -> h1 in bulk: mean "
               "round trip "
            << fifo_ms << " ms behind one FIFO, " << ack_first_ms << " ms with ACKs first\n";
  EXPECT_LT(ack_first_ms, 0.5 * fifo_ms) << fifo_ms << " vs " << ack_first_ms;
  // A run on it says so in its network settings.
  ASSERT_EQ(Run("--type all_reduce --size 1MiB", 2, "").exit_code, 0);
  const json summary = Results()["network_settings"]["summary"];
  EXPECT_EQ(summary.value("host_nics", ""),
            "tbf, small TCP packets (ACKs) first, 100mbit, queue 2000000 B each")
      << summary.dump();
  EXPECT_EQ(summary.value("host_links", ""), "tbf, 100mbit, queue 2000000 B") << summary.dump();
}

// The libfabric transport (tcp;ofi_rxm, both modes) on the testbed: each rank in its own
// namespace binds its host's address, the fabric endpoint and the watch connections with it.
TEST_F(Testbed, AVerifiedReplayOverTheFabricTransport) {
  Up("--topology star:4 --rate 400mbit");
  for (const std::string mode : {"", " --fabric-rma"}) {
    CliResult r = Run("--type all_reduce --size 4MiB", 4, "--verify --transport fabric" + mode,
                      mode.empty() ? "fab" : "fab-rma");
    ASSERT_EQ(r.exit_code, 0) << mode << "\n" << r.output;
    EXPECT_NE(r.output.find("collectives checked, all correct"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("verify failed"), std::string::npos) << r.output;
  }
}

TEST_F(Testbed, ARateFaultSlowsOnlyTransfersThroughThatLink) {
  Up("--topology star:4 --rate 400mbit");
  // A busy machine (CI runs two tests at once) only ever slows a measurement: the rates the
  // links allow are the best of two.
  const auto best_of_two = [&](int from, int to) {
    return std::max(Iperf(from, to, 1.5), Iperf(from, to, 1.5));
  };
  const double before = best_of_two(1, 2);
  CliResult f = RunCli(Genie("testbed fault " + name_ + " h3 --rate 100mbit"));
  ASSERT_EQ(f.exit_code, 0) << f.output;
  const double through = Iperf(3, 0, 1.5);
  const double elsewhere = best_of_two(1, 2);
  EXPECT_LT(through, 0.35 * before) << through << " vs " << before;
  EXPECT_GT(elsewhere, 0.85 * before) << elsewhere << " vs " << before;
  // genie's own ring over the 4 hosts is bounded by the slow link.
  CliResult r = Run("--type all_reduce --size 16MiB", 4, "--iterations 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(Median(BusBwPerIteration(Results())), 0.35 * before);
  ASSERT_EQ(RunCli(Genie("testbed fault " + name_ + " clear")).exit_code, 0);
  EXPECT_GT(best_of_two(3, 0), 0.85 * before);
}

TEST_F(Testbed, LossShowsAsRetransmissionsOfTheHostSendingIntoIt) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {link: h2, loss: 2%, direction: in}\n";
  CliResult r =
      Run("--type all_reduce --size 16MiB", 4, "--iterations 2 --faults " + dir_ + "/faults.yml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json res = Results();
  // The ring sends h1 -> h2: h1 retransmits, the others (whose sends avoid h2's way in) hardly.
  const uint64_t h1 = HostCounters(res, "h1")["tcp_retrans_segs"];
  uint64_t others = 0;
  for (const char* h : {"h0", "h2", "h3"}) {
    others = std::max<uint64_t>(others, HostCounters(res, h)["tcp_retrans_segs"]);
  }
  EXPECT_GT(h1, 20u);
  EXPECT_GT(h1, 5 * others) << "h1 " << h1 << ", most of the others " << others;
  const json& faults = res["provenance"]["testbed"]["faults"];
  ASSERT_GE(faults.size(), 2u) << faults.dump();
  EXPECT_EQ(faults[0]["action"], "apply");
  EXPECT_EQ(faults.back()["action"], "clear");
  // Cleared at the end: no rule left.
  EXPECT_EQ(
      RunCli("ip netns exec " + Ns("h2") + " iptables -t mangle -S PREROUTING | wc -l").output,
      "1\n");
}

TEST_F(Testbed, DelayShowsInTheRoundTripThroughThatLink) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {link: h3, delay: 20ms}\n";
  // Rank 3's clock-sync ping-pongs to rank 0 cross h3's link both ways.
  CliResult r = Run("--type all_reduce --size 1MiB", 4,
                    "--clock-sync always --faults " + dir_ + "/faults.yml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json res = Results();
  const json& faults = res["provenance"]["testbed"]["faults"];
  ASSERT_EQ(faults.size(), 2u) << faults.dump();
  EXPECT_FALSE(faults[0].contains("error")) << faults.dump();
  // The schedule starts with the run, after the clocks were synchronised: measure the round
  // trip with the fault applied beforehand by hand.
  ASSERT_EQ(RunCli(Genie("testbed fault " + name_ + " h3 --delay 20ms")).exit_code, 0);
  CliResult r2 = Run("--type all_reduce --size 1MiB", 4, "--clock-sync always", "out2");
  ASSERT_EQ(r2.exit_code, 0) << r2.output;
  ASSERT_EQ(RunCli(Genie("testbed fault " + name_ + " clear")).exit_code, 0);
  std::map<int, int64_t> rtt;
  for (int rank = 1; rank < 4; ++rank) {
    std::ifstream in(dir_ + "/out2/rank-" + std::to_string(rank) + ".jsonl");
    std::string line;
    while (std::getline(in, line)) {
      json j = json::parse(line);
      if (j.value("record", "") == "clock") rtt[rank] = j["rtt_ns"];
    }
  }
  ASSERT_EQ(rtt.size(), 3u);
  // 20 ms each way through h3's link (both directions delayed): >= 40 ms; the others < 10 ms.
  EXPECT_GE(rtt[3], 38'000'000) << rtt[3];
  EXPECT_LT(rtt[1], 10'000'000) << rtt[1];
  EXPECT_LT(rtt[2], 10'000'000) << rtt[2];
}

TEST_F(Testbed, ALinkDownForTwoSecondsStallsTheRunThenItCompletes) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {at: 300ms, link: h2, down: 2s}\n";
  const double t0 = NowSeconds();
  CliResult r = Run("--type all_reduce --size 4MiB", 4,
                    "--iterations 4 --peer-timeout 8s --faults " + dir_ + "/faults.yml");
  const double took = NowSeconds() - t0;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GE(took, 2.0);
  json res = Results();
  const json& faults = res["provenance"]["testbed"]["faults"];
  ASSERT_EQ(faults.size(), 3u) << faults.dump();
  EXPECT_EQ(faults[0]["fault"], "h2 both: down for 2.000 s");
  EXPECT_EQ(faults[1]["action"], "undo");
  const int64_t down_for = faults[1]["at_ns"].get<int64_t>() - faults[0]["at_ns"].get<int64_t>();
  EXPECT_NEAR(static_cast<double>(down_for) / 1e9, 2.0, 0.3);
  // Some iteration took the stall.
  int64_t longest = 0;
  int stalled = -1;
  for (const auto& it : res["iterations"]) {
    if (it["step_time_ns"].get<int64_t>() <= longest) continue;
    longest = it["step_time_ns"];
    stalled = it["iteration"];
  }
  EXPECT_GE(longest, 1'500'000'000) << res["iterations"].dump();
  // Its hosts' TCP waited the outage out in retransmission timeouts, counted in that iteration.
  int64_t timeouts = 0;
  for (const auto& rank : res["ranks"]) {
    for (const auto& it : rank["iterations"]) {
      if (it["iteration"] == stalled) timeouts += it.value("tcp_timeouts", int64_t{0});
    }
  }
  EXPECT_GT(timeouts, 0) << res["ranks"].dump();
}

TEST_F(Testbed, ALinkDownForGoodEndsEveryRankWithinThePeerTimeoutNamingThePeer) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {at: 500ms, link: h2, down: true}\n";
  const double t0 = NowSeconds();
  CliResult r = Run("--type all_reduce --size 4MiB", 4,
                    "--iterations 1000 --peer-timeout 3s --faults " + dir_ + "/faults.yml");
  const double took = NowSeconds() - t0;
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(took, 0.5 + 3 * 1.5 + 3) << r.output;
  EXPECT_NE(r.output.find("rank 2"), std::string::npos) << r.output;
  // Rank 0 cleared the fault as it ended: the link is up again.
  CliResult link = RunCli("ip -n " + Ns("sw") + " -j link show h2n0");
  EXPECT_NE(link.output.find("\"UP\""), std::string::npos) << link.output;
}

TEST_F(Testbed, FaultsAreClearedWhenRankZeroIsKilled) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {link: h1, rate: 50mbit}\n  - {link: h2, "
                                         "loss: 5%}\n  - {link: h3, delay: 5ms}\n";
  const std::string w = dir_ + "/w";
  ASSERT_EQ(
      RunCli(Genie("gen collective --type all_reduce --size 16MiB --ranks 4 -o " + w)).exit_code,
      0);
  Child launch = Spawn(Genie("launch --testbed " + name_ + " -n 4 -- run " + w +
                             " --iterations 1000 --peer-timeout 5s --faults " + dir_ +
                             "/faults.yml -o " + dir_ + "/out"),
                       dir_ + "/launch.log");
  // Wait until the faults are on (the delay helper runs in h0's view of h3's link: host h3).
  bool on = false;
  for (int i = 0; i < 100 && !on; ++i) {
    on = RunCli("tc -n " + Ns("h1") + " qdisc show dev eth0").output.find("50Mbit") !=
         std::string::npos;
    if (!on) usleep(100'000);
  }
  ASSERT_TRUE(on) << ReadLog(launch);
  usleep(500'000);
  // SIGKILL rank 0 (the one whose runner applied the faults): its guardian clears them.
  CliResult pid = RunCli("pgrep -f '" + w +
                         " --iterations 1000' | head -n 20 | while read p; do "
                         "grep -qa GENIE_RANK=0 /proc/$p/environ 2>/dev/null && echo $p; done");
  ASSERT_FALSE(pid.output.empty());
  RunCli("kill -9 " + pid.output.substr(0, pid.output.find('\n')));
  auto code = WaitExit(launch, 30);
  ASSERT_TRUE(code.has_value()) << ReadLog(launch);
  EXPECT_NE(*code, 0);
  EXPECT_TRUE(FaultsCleared(5)) << RunCli("tc -n " + Ns("h1") + " qdisc show dev eth0").output;
}

// `genie launch` killed by SIGKILL runs no cleanup of its own: its ranks die with it (the
// parent-death signal, the launch guardian), and with rank 0 the fault guardian clears every
// fault, filter rule and delay helper the run put on the testbed (TearDown checks the helpers).
TEST_F(Testbed, EverythingOfARunDiesWithALauncherKilledBySigkill) {
  Up("--topology star:4 --rate 400mbit");
  std::ofstream(dir_ + "/faults.yml") << "faults:\n  - {link: h1, rate: 50mbit}\n  - {link: h2, "
                                         "loss: 5%}\n  - {link: h3, delay: 5ms}\n";
  const std::string w = dir_ + "/w";
  ASSERT_EQ(
      RunCli(Genie("gen collective --type all_reduce --size 16MiB --ranks 4 -o " + w)).exit_code,
      0);
  // `exec`: the child's pid is the launcher's, so only the launcher is killed below.
  Child launch = Spawn("exec " + Genie("launch --testbed " + name_ + " -n 4 -- run " + w +
                                       " --iterations 1000 --peer-timeout 5s --faults " + dir_ +
                                       "/faults.yml -o " + dir_ + "/out"),
                       dir_ + "/launch.log");
  bool on = false;
  for (int i = 0; i < 100 && !on; ++i) {
    on = RunCli("tc -n " + Ns("h1") + " qdisc show dev eth0").output.find("50Mbit") !=
             std::string::npos &&
         RunCli("ip netns exec " + Ns("h2") + " iptables -t mangle -S PREROUTING | wc -l")
                 .output != "1\n";
    if (!on) usleep(100'000);
  }
  ASSERT_TRUE(on) << ReadLog(launch);
  ASSERT_EQ(kill(launch.pid, SIGKILL), 0);
  ASSERT_TRUE(WaitExit(launch, 5).has_value());
  // "[ ]run": the regex matches the ranks' command lines, not this shell's own.
  const std::string ranks = "pgrep -f '[ ]run " + w + " --iterations 1000' | wc -l";
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = RunCli(ranks).output == "0\n";
    if (!gone) usleep(100'000);
  }
  EXPECT_TRUE(gone) << "ranks outlived their launcher: "
                    << RunCli("pgrep -af '[ ]run " + w + "'").output;
  EXPECT_TRUE(FaultsCleared(10)) << RunCli("tc -n " + Ns("h1") + " qdisc show dev eth0").output;
  // What the ranks wrote is there, marked incomplete.
  CliResult show = RunCli(Genie("results show " + dir_ + "/out"));
  EXPECT_NE(show.output.find("INCOMPLETE"), std::string::npos) << show.output;
}

}  // namespace
}  // namespace genie::testing
