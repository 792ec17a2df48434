// genie testbed: a multi-host network on one machine — up, down, status, list, faults, and its
// network.yml for ASTRA-sim. The testbed itself is src/genie/testbed/; this file only turns
// flags into its calls and prints (docs/testbed.md).
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>

#include "genie/testbed/calibration.h"
#include "genie/testbed/commands.h"
#include "genie/testbed/control.h"
#include "genie/testbed/counters.h"
#include "genie/testbed/ecmp.h"
#include "genie/testbed/injector.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace {

namespace tb = genie::testbed;
namespace fs = std::filesystem;

struct TestbedArgs {
  std::string name = "genie";
  std::string topology;
  std::string rate;
  std::string spine_rate;
  std::string spine_queue;
  std::string spine_sched;
  std::string queue;
  int mtu = 0;
  int nics = 0;
  std::string hash;
  std::string tcp_congestion;
  std::string file;
  bool dry_run = false;
  bool json = false;
  // fault
  std::string target;  // a link, or "clear"
  std::string f_rate, f_queue, f_loss, f_delay, f_jitter, f_for, f_period = "1s";
  std::string direction = "both";
  bool f_down = false, f_up = false;
  int f_flap = 0;
  // network-yml
  int ranks_per_host = 1;
  std::string latency;  // "" = the default (calibration.h)
  std::string output;
  bool accept_findings = false;
  std::string basis = "all-hosts";  // calibrate: which figures the description carries
};

int Fail(const std::string& what, const genie::Status& st) {
  fmt::print(stderr, "genie testbed {}: {}\n", what, st.message());
  return st.code() == genie::Status::Code::kInvalidArgument ||
                 st.code() == genie::Status::Code::kNotFound
             ? 2
             : 1;
}

int Up(const TestbedArgs& a) {
  tb::TestbedSpec spec;
  if (!a.file.empty()) {
    genie::Status st = tb::LoadSpecFile(a.file, &spec);
    if (!st.ok()) return Fail("up", st);
  }
  // Flags win over the file.
  if (!a.name.empty() && (a.file.empty() || a.name != "genie")) spec.name = a.name;
  if (!a.topology.empty()) {
    genie::Status st = tb::ParseTopology(a.topology, &spec);
    if (!st.ok()) return Fail("up", st);
  }
  if (spec.hosts == 0) {
    return Fail("up", genie::Status::InvalidArgument(
                          "say which topology: --topology star:8 or leafspine:2x2x4 (or a "
                          "`topology:` in --file)"));
  }
  // A flag, when given, through `parse` (ParseBitRate, ParseBytes, ...) into `*into`.
  auto read = [](const std::string& text, auto parse, auto* into) -> genie::Status {
    if (text.empty()) return genie::Status::Ok();
    auto v = parse(text);
    if (!v.ok()) return v.status();
    *into = *v;
    return genie::Status::Ok();
  };
  genie::Status parsed = read(a.rate, genie::ParseBitRate, &spec.rate_bps);
  if (parsed.ok()) parsed = read(a.spine_rate, genie::ParseBitRate, &spec.spine_rate_bps);
  if (parsed.ok()) parsed = read(a.spine_queue, genie::ParseBytes, &spec.spine_queue_bytes);
  if (parsed.ok()) parsed = read(a.spine_sched, tb::ParseScheduling, &spec.spine_scheduling);
  if (parsed.ok()) parsed = read(a.queue, genie::ParseBytes, &spec.queue_bytes);
  if (!parsed.ok()) return Fail("up", parsed);
  if (a.mtu > 0) spec.mtu = a.mtu;
  if (a.nics > 0) spec.nics = a.nics;
  if (!a.hash.empty()) spec.hash = a.hash == "l3" ? tb::EcmpHash::kL3 : tb::EcmpHash::kL4;
  if (!a.tcp_congestion.empty()) spec.tcp_congestion = a.tcp_congestion;
  if (a.dry_run) {
    auto layout = tb::LayOut(spec);
    if (!layout.ok()) return Fail("up", layout.status());
    for (const auto& cmd : tb::UpCommands(*layout)) fmt::print("{}\n", tb::ToString(cmd));
    return 0;
  }
  tb::SystemShell shell;
  const auto started = std::chrono::steady_clock::now();
  auto layout = tb::Up(spec, shell);
  if (!layout.ok()) return Fail("up", layout.status());
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "testbed {}: {} hosts ({}), {} links at {}{}, {} NIC(s) per host, TCP {}, up in {:.1f} s\n",
      spec.name, layout->hosts.size(), spec.TopologyText(), layout->links.size(),
      genie::FormatBitRate(spec.rate_bps),
      spec.spine_rate_bps
          ? " (leaf-spine links at " + genie::FormatBitRate(*spec.spine_rate_bps) + ")"
          : std::string(),
      spec.nics, layout->spec.tcp_congestion.empty() ? "?" : layout->spec.tcp_congestion, secs);
  fmt::print("  hosts: {}-h0 .. {}-h{} (h0 at {}); description: {}\n", spec.name, spec.name,
             layout->hosts.size() - 1, layout->RendezvousAddress(), tb::DescriptionPath(spec.name));
  fmt::print("  run on it: genie launch --testbed {} -n {} -- run WORKLOAD\n", spec.name,
             layout->hosts.size());
  return 0;
}

std::string Rate(uint64_t bps) { return genie::FormatBitRate(bps); }

int Status(const TestbedArgs& a) {
  auto layout = tb::Load(a.name);
  if (!layout.ok()) return Fail("status", layout.status());
  tb::SystemShell shell;
  auto counters = tb::ReadCounters(*layout, shell);
  if (!counters.ok()) return Fail("status", counters.status());
  if (a.json) {
    nlohmann::json j = layout->ToJson();
    j["counters"] = counters->ToJson();
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  const auto& s = layout->spec;
  fmt::print("testbed {}: {}, {} NIC(s) per host, {} links, ECMP hash {}, TCP {}\n", s.name,
             s.TopologyText(), s.nics, layout->links.size(),
             s.hash == tb::EcmpHash::kL3 ? "l3" : "l4",
             s.tcp_congestion.empty() ? "?" : s.tcp_congestion);
  fmt::print("{:<8} {:<12} {:<6} {:<16}\n", "host", "netns", "nic", "address");
  for (const auto& h : layout->hosts) {
    for (const auto& n : h.nics)
      fmt::print("{:<8} {:<12} {:<6} {:<16}\n", h.name, h.netns, n.ifname, n.address);
  }
  // Live state of each link end: carrier, what its tbf is set to now, counters.
  fmt::print("\n{:<7} {:<4} {:<10} {:<6} {:<10} {:>12} {:>12} {:>9} {:>9}\n", "link", "end",
             "interface", "state", "rate", "tx bytes", "rx bytes", "q drops", "backlog");
  for (const auto& l : layout->links) {
    for (const tb::LinkEnd* e : {&l.a, &l.b}) {
      std::string state = "?", rate = Rate(l.rate_bps);
      auto info = shell.Output({"ip", "-n", e->netns, "-j", "link", "show", e->ifname});
      if (info.ok()) {
        try {
          auto j = nlohmann::json::parse(*info);
          if (!j.empty()) state = j[0].value("operstate", "?");
        } catch (...) {
        }
      }
      auto q = shell.Output({"tc", "-n", e->netns, "-j", "qdisc", "show", "dev", e->ifname});
      if (q.ok()) {
        try {
          for (const auto& qd : nlohmann::json::parse(*q)) {
            if (qd.value("kind", "") == "tbf") rate = Rate(qd["options"].value("rate", 0ull) * 8);
          }
        } catch (...) {
        }
      }
      const tb::InterfaceCounters* c = counters->Find(e->node, e->ifname);
      fmt::print("{:<7} {:<4} {:<10} {:<6} {:<10} {:>12} {:>12} {:>9} {:>9}\n", l.id, e->node,
                 e->ifname, state, rate, c ? c->tx_bytes : 0, c ? c->rx_bytes : 0,
                 c ? c->qdisc_drops : 0, c ? c->qdisc_backlog_bytes : 0);
    }
  }
  fmt::print("\n{:<8} {:>14} {:>14} {:>10}\n", "host", "tcp out segs", "retrans segs", "timeouts");
  for (const auto& h : counters->hosts) {
    fmt::print("{:<8} {:>14} {:>14} {:>10}\n", h.host, h.out_segs, h.retrans_segs, h.timeouts);
  }
  return 0;
}

int Fault(const TestbedArgs& a) {
  auto layout = tb::Load(a.name);
  if (!layout.ok()) return Fail("fault", layout.status());
  tb::SystemShell shell;
  tb::Injector injector(*layout, shell);
  if (a.target == "clear") {
    genie::Status st = injector.ClearAll();
    if (!st.ok()) return Fail("fault", st);
    fmt::print(
        "testbed {}: every fault cleared (links up, shaping as described, no rules, no "
        "helpers)\n",
        a.name);
    return 0;
  }
  tb::Fault f;
  f.link = a.target;
  auto dir = tb::ParseDirection(a.direction);
  if (!dir.ok()) return Fail("fault", dir.status());
  f.direction = *dir;
  int kinds = 0;
  auto bad = [](const genie::Status& st) { return Fail("fault", st); };
  if (!a.f_rate.empty()) {
    auto r = genie::ParseBitRate(a.f_rate);
    if (!r.ok()) return bad(r.status());
    f.kind = tb::FaultKind::kRate, f.rate_bps = *r, ++kinds;
  }
  if (!a.f_queue.empty()) {
    auto q = genie::ParseBytes(a.f_queue);
    if (!q.ok()) return bad(q.status());
    f.kind = tb::FaultKind::kQueue, f.queue_bytes = *q, ++kinds;
  }
  if (!a.f_loss.empty()) {
    auto l = tb::ParseLoss(a.f_loss);
    if (!l.ok()) return bad(l.status());
    f.kind = tb::FaultKind::kLoss, f.loss = *l, ++kinds;
  }
  if (!a.f_delay.empty()) {
    auto d = genie::ParseDuration(a.f_delay);
    if (!d.ok()) return bad(d.status());
    f.kind = tb::FaultKind::kDelay, f.delay = *d, ++kinds;
    if (!a.f_jitter.empty()) {
      auto j = genie::ParseDuration(a.f_jitter);
      if (!j.ok()) return bad(j.status());
      f.jitter = *j;
    }
  }
  if (a.f_down) f.kind = tb::FaultKind::kDown, ++kinds;
  if (a.f_up) f.kind = tb::FaultKind::kUp, ++kinds;
  if (a.f_flap > 0) {
    f.kind = tb::FaultKind::kFlap, f.flaps = a.f_flap, ++kinds;
    auto p = genie::ParseDuration(a.f_period);
    if (!p.ok()) return bad(p.status());
    f.period = *p;
  }
  if (kinds != 1) {
    return bad(genie::Status::InvalidArgument(
        "say exactly one of --rate, --queue, --loss, --delay [--jitter], --down, --up, --flap N"));
  }
  if (!a.f_for.empty()) {
    auto d = genie::ParseDuration(a.f_for);
    if (!d.ok()) return bad(d.status());
    f.duration = *d;
  }
  genie::Status st = injector.Check(f);
  if (!st.ok()) return bad(st);
  // Timed faults (--for, --flap) play here, in the foreground.
  const auto start = std::chrono::steady_clock::now();
  for (const auto& action : tb::Expand(f)) {
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(action.offset));
    st = injector.Do(action);
    if (!st.ok()) return Fail("fault", st);
    fmt::print("testbed {}: {} {}\n", a.name,
               action.undo ? "undone:" : "applied:", action.fault.Describe());
  }
  return 0;
}

int NetworkYml(const TestbedArgs& a) {
  double latency = -1;
  if (!a.latency.empty()) {
    auto lat = genie::ParseDuration(a.latency);
    if (!lat.ok()) return Fail("network-yml", lat.status());
    latency = static_cast<double>(*lat);
  }
  auto text = tb::TestbedNetworkYml(a.name, a.ranks_per_host, latency);
  if (!text.ok()) return Fail("network-yml", text.status());
  if (a.output.empty()) {
    std::cout << *text;
    return 0;
  }
  std::ofstream out(a.output);
  out << *text;
  if (!out) return Fail("network-yml", genie::Status::IoError(a.output + ": cannot write"));
  return 0;
}

// `genie doctor` on the testbed, one rank per host, its figures turned into the calibration.
int Calibrate(const TestbedArgs& a) {
  auto layout = tb::Load(a.name);
  if (!layout.ok()) return Fail("calibrate", layout.status());
  const std::string json = tb::StateDir() + "/" + a.name + ".calibration-scan.json";
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // The scan's own messages are kept aside: a doctor with findings exits 1 (its launcher says
  // "rank 0 failed"), which is no failure here; they are shown when the scan wrote nothing.
  const std::string log = json + ".log";
  // Accepted findings still need the ring steps (the doctor skips them on a scan with findings).
  const std::string cmd = fmt::format(
      "'{}' launch --testbed '{}' -n {} -- doctor --bytes 16MiB --ring-steps {} --json '{}' "
      ">'{}' 2>&1",
      self, a.name, layout->hosts.size(), a.accept_findings ? "always" : "healthy", json, log);
  fmt::print("testbed {}: measuring every pair of its {} hosts (genie doctor) ...\n", a.name,
             layout->hosts.size());
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  std::string scan_log;
  {
    std::ifstream log_in(log);
    scan_log.assign(std::istreambuf_iterator<char>(log_in), std::istreambuf_iterator<char>());
  }
  std::error_code ec;
  fs::remove(json, ec);
  fs::remove(log, ec);
  if (doc.is_discarded()) {
    std::cerr << scan_log;
    return Fail("calibrate", genie::Status::Unavailable(fmt::format(
                                 "the scan wrote no figures (genie doctor exited with {}); run "
                                 "`genie launch --testbed {} -n {} -- doctor` to see why",
                                 rc, a.name, layout->hosts.size())));
  }
  auto cal = tb::CalibrationFromDoctor(*layout, doc, a.accept_findings, a.basis);
  if (!cal.ok()) return Fail("calibrate", cal.status());
  if (doc.contains("findings") && doc["findings"].is_array()) {
    for (const auto& f : doc["findings"]) {
      fmt::print("testbed {}: accepted finding: {}\n", a.name, f.value("text", std::string("?")));
    }
  }
  std::string ecmp;
  if (tb::EcmpKnown(*layout)) {
    tb::SystemShell shell;
    auto routes = tb::QueryEcmpRoutes(*layout, shell);
    if (routes.ok()) {
      cal->ecmp_routes = nlohmann::json::array();
      for (const auto& r : *routes) cal->ecmp_routes.push_back({r.src_host, r.dst_host, r.spine});
      ecmp = fmt::format(
          "testbed {}: ECMP l3: the spine of each of its {} pairs across leaves is "
          "known (ip route get, recorded); the flow model routes them there\n",
          a.name, routes->size());
    } else {
      ecmp = fmt::format("testbed {}: ECMP l3 but {}\n", a.name, routes.status().message());
    }
  }
  genie::Status st = tb::SaveCalibration(a.name, *cal);
  if (!st.ok()) return Fail("calibrate", st);
  fmt::print(
      "testbed {}: one pair: goodput {:.3f} of {} (median pair {:.4f} GB/s), message "
      "overhead {:.1f} us (median round trip {:.1f} us)\n",
      a.name, cal->goodput, genie::FormatBitRate(layout->HostLinkRate()), cal->median_gbps,
      cal->message_overhead_ns / 1e3, cal->median_rtt_us);
  if (cal->all_hosts_goodput > 0) {
    fmt::print(
        "testbed {}: all hosts at once (ring steps): goodput {:.3f} ({:.4f} GB/s), "
        "{:.1f} us per step\n",
        a.name, cal->all_hosts_goodput, cal->all_hosts_gbps, cal->all_hosts_overhead_ns / 1e3);
  }
  const tb::MeasuredCosts costs = cal->Costs();
  fmt::print(
      "testbed {}: the description uses {} (goodput {:.3f}, message overhead {:.1f} us); "
      "saved in {}; `genie testbed network-yml {}` and `genie run --predict` on it use "
      "them\n",
      a.name, cal->basis, costs.goodput, costs.message_overhead_ns / 1e3,
      tb::CalibrationPath(a.name), a.name);
  fmt::print("{}", ecmp);
  return 0;
}

}  // namespace

GENIE_COMMAND(testbed,
              "A multi-host network on this machine: up, down, status, list, fault, calibrate") {
  auto a = std::make_shared<TestbedArgs>();
  app.require_subcommand(1);
  CLI::App* up =
      app.add_subcommand("up", "Build a testbed: hosts as network namespaces, shaped links");
  up->add_option("--topology", a->topology, "star:H (H hosts on one switch) or leafspine:LxSxH");
  up->add_option("--rate", a->rate, "Rate of every link, both directions (e.g. 1gbit, 400mbit)");
  up->add_option("--spine-rate", a->spine_rate,
                 "leafspine: rate of every leaf-spine link, both directions (default: --rate)");
  up->add_option("--spine-queue", a->spine_queue,
                 "leafspine: queue limit of every leaf-spine link end (default: --queue)");
  up->add_option("--spine-sched", a->spine_sched,
                 "leafspine: how a leaf-spine link end shares its rate: per-host (a queue per "
                 "sending host, served round-robin; default) or fifo (one queue)")
      ->check(CLI::IsMember({"per-host", "fifo"}));
  up->add_option("--queue", a->queue,
                 "tbf queue limit per link end (default: 20 ms of the rate, >= 2 MB)");
  up->add_option("--mtu", a->mtu, "MTU of every link")->check(genie::cli::IntIn(576, 65000));
  up->add_option("--nics", a->nics, "NICs per host, NIC k on rail k")
      ->check(genie::cli::IntIn(1, 8));
  up->add_option("--hash", a->hash, "leafspine ECMP hash: l3 (addresses) or l4 (and ports)")
      ->check(CLI::IsMember({"l3", "l4"}));
  up->add_option("--tcp-congestion", a->tcp_congestion,
                 "The hosts' TCP congestion control (cubic, bbr, reno, dctcp, ...; default: "
                 "what a new namespace inherits from this machine)");
  up->add_option("--file,-f", a->file, "YAML description (docs/testbed.md); flags override it")
      ->check(CLI::ExistingFile);
  up->add_option("--name", a->name, "Testbed name, prefix of its namespaces (default genie)");
  up->add_flag("--dry-run", a->dry_run, "Print the commands instead of running them");

  CLI::App* down = app.add_subcommand("down", "Remove a testbed and everything it made");
  down->add_option("name", a->name, "Testbed name (default genie)");
  CLI::App* status =
      app.add_subcommand("status", "Hosts, addresses, links, shaping, live counters");
  status->add_option("name", a->name, "Testbed name (default genie)");
  status->add_flag("--json", a->json, "The description and counters as JSON");
  CLI::App* list = app.add_subcommand("list", "The testbeds that are up");

  CLI::App* fault = app.add_subcommand(
      "fault",
      "Apply a fault to a link now (genie testbed fault NAME h3 --rate 200mbit), or "
      "`genie testbed fault NAME clear`");
  fault->add_option("name", a->name, "Testbed name")->required();
  fault->add_option("link", a->target, "h3, h3:1 (NIC 1), l0-s1, or `clear`")->required();
  fault->add_option("--direction", a->direction, "out (from the link's first end), in, both")
      ->check(CLI::IsMember({"out", "in", "both"}));
  fault->add_option("--rate", a->f_rate, "Change the rate (tbf)");
  fault->add_option("--queue", a->f_queue, "Change the queue limit (tbf)");
  fault->add_option("--loss", a->f_loss, "Drop packets at random (e.g. 1%)");
  fault->add_option("--delay", a->f_delay, "Hold every packet this long (NFQUEUE helper)");
  fault->add_option("--jitter", a->f_jitter, "With --delay: +- uniform jitter");
  fault->add_flag("--down", a->f_down, "Take the link down");
  fault->add_flag("--up", a->f_up, "Bring the link up");
  fault->add_option("--flap", a->f_flap, "Down and up N times")->check(genie::cli::IntIn(1, 1000));
  fault->add_option("--period", a->f_period, "With --flap: one down+up cycle (default 1s)");
  fault->add_option("--for", a->f_for, "Undo the fault after this long (waits here)");

  CLI::App* yml = app.add_subcommand("network-yml", "The testbed as an ASTRA-sim network.yml");
  yml->add_option("name", a->name, "Testbed name (default genie)");
  yml->add_option("--ranks-per-host", a->ranks_per_host,
                  "Ranks on each host (rank i on host i mod H)")
      ->check(genie::cli::IntIn(1, 4096));
  yml->add_option("--latency", a->latency,
                  "One-way latency of a link (default 30us; 1ns when calibrated, the measured "
                  "per-message overhead then holds it)");

  CLI::App* calibrate = app.add_subcommand(
      "calibrate",
      "Measure the testbed's goodput and per-message cost (genie doctor, one rank "
      "per host) for the network description the flow model predicts with");
  calibrate->add_option("name", a->name, "Testbed name (default genie)");
  calibrate->add_flag("--accept-findings", a->accept_findings,
                      "Calibrate even when the scan finds a slow host or loss");
  calibrate
      ->add_option("--basis", a->basis,
                   "Which figures the description carries: all-hosts (every host sending "
                   "at once; namespaces sharing this machine's CPUs) or one-pair (one pair "
                   "alone; a cluster with a CPU per host). Both are recorded")
      ->check(CLI::IsMember({"all-hosts", "one-pair"}));
  yml->add_option("-o,--output", a->output, "Write here instead of stdout");

  return [=]() -> int {
    if (up->parsed()) return Up(*a);
    if (down->parsed()) {
      tb::SystemShell shell;
      genie::Status st = tb::CheckCanBuild(shell);
      if (st.ok()) st = tb::Down(a->name, shell);
      if (!st.ok()) return Fail("down", st);
      fmt::print("testbed {}: removed\n", a->name);
      return 0;
    }
    if (status->parsed()) return Status(*a);
    if (list->parsed()) {
      for (const auto& n : tb::List()) {
        auto l = tb::Load(n);
        if (l.ok()) {
          fmt::print("{:<16} {:<18} {} hosts, {}\n", n, l->spec.TopologyText(), l->hosts.size(),
                     genie::FormatBitRate(l->spec.rate_bps));
        } else {
          fmt::print("{:<16} (damaged: {})\n", n, l.status().message());
        }
      }
      return 0;
    }
    if (fault->parsed()) return Fault(*a);
    if (yml->parsed()) return NetworkYml(*a);
    if (calibrate->parsed()) return Calibrate(*a);
    return 2;
  };
}
