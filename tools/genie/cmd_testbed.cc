// genie testbed: a multi-host network on one machine — up, down, status, list, faults,
// calibrate, and its network.yml for ASTRA-sim. The testbed itself is src/genie/testbed/, what
// each subcommand does driver/testbed_commands.h, driver/testbed_calibrate.h and
// testbed/status.h; this file only turns flags into their calls (docs/testbed.md).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "genie/driver/testbed_calibrate.h"
#include "genie/driver/testbed_commands.h"
#include "genie/testbed/calibration.h"
#include "genie/testbed/fault.h"
#include "genie/testbed/shell.h"
#include "genie/testbed/spec.h"
#include "genie/testbed/status.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace {

namespace tb = genie::testbed;

struct TestbedArgs {
  std::string name = "genie";
  std::string topology;
  std::string rate;
  std::string spine_rate;
  std::string spine_queue;
  std::string spine_sched;
  std::string host_sched;
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
  int scan_hosts = 0;               // calibrate --hosts (0: all)
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
  if (parsed.ok()) parsed = read(a.host_sched, tb::ParseScheduling, &spec.host_scheduling);
  if (parsed.ok()) parsed = read(a.queue, genie::ParseBytes, &spec.queue_bytes);
  if (!parsed.ok()) return Fail("up", parsed);
  if (a.mtu > 0) spec.mtu = a.mtu;
  if (a.nics > 0) spec.nics = a.nics;
  if (!a.hash.empty()) spec.hash = a.hash == "l3" ? tb::EcmpHash::kL3 : tb::EcmpHash::kL4;
  if (!a.tcp_congestion.empty()) spec.tcp_congestion = a.tcp_congestion;
  genie::Status st = genie::driver::TestbedUp(spec, a.dry_run);
  return st.ok() ? 0 : Fail("up", st);
}

int Status(const TestbedArgs& a) {
  tb::SystemShell shell;
  auto text = tb::StatusText(a.name, a.json, shell);
  if (!text.ok()) return Fail("status", text.status());
  fmt::print("{}", *text);
  return 0;
}

int Fault(const TestbedArgs& a) {
  if (a.target == "clear") {
    genie::Status st = genie::driver::TestbedClearFaults(a.name);
    return st.ok() ? 0 : Fail("fault", st);
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
    auto l = genie::ParseFraction(a.f_loss);
    if (!l.ok()) return bad(genie::Status::InvalidArgument("--loss: " + l.status().message()));
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
  genie::Status st = genie::driver::TestbedFault(a.name, f);
  return st.ok() ? 0 : Fail("fault", st);
}

int NetworkYml(const TestbedArgs& a) {
  double latency = -1;
  if (!a.latency.empty()) {
    auto lat = genie::ParseDuration(a.latency);
    if (!lat.ok()) return Fail("network-yml", lat.status());
    latency = static_cast<double>(*lat);
  }
  std::string note;
  auto text = genie::driver::TestbedNetworkYmlNow(a.name, a.ranks_per_host, latency,
                                                  a.tcp_congestion, &note);
  if (!text.ok()) return Fail("network-yml", text.status());
  // On stderr: stdout is the file itself.
  fmt::print(stderr, "testbed {}: {}\n", a.name, note);
  if (a.output.empty()) {
    std::cout << *text;
    return 0;
  }
  std::ofstream out(a.output);
  out << *text;
  if (!out) return Fail("network-yml", genie::Status::IoError(a.output + ": cannot write"));
  return 0;
}

int Calibrate(const TestbedArgs& a) {
  genie::driver::CalibrateOptions o;
  o.name = a.name;
  o.accept_findings = a.accept_findings;
  o.basis = a.basis;
  o.tcp_congestion = a.tcp_congestion;
  o.hosts = a.scan_hosts;
  genie::Status st = genie::driver::CalibrateTestbed(o);
  return st.ok() ? 0 : Fail("calibrate", st);
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
  up->add_option("--host-sched", a->host_sched,
                 "How each host's NIC sends: ack-first (pure ACKs before its queued data, as a "
                 "host with fq or fq_codel; default) or fifo (one queue)")
      ->check(CLI::IsMember({"ack-first", "fifo"}));
  up->add_option("--queue", a->queue,
                 "Queue limit per link end, each FIFO's (default: 20 ms of the rate, >= 2 MB)");
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
  yml->add_option("--tcp-congestion", a->tcp_congestion,
                  "With the calibration measured under this TCP congestion control on the "
                  "sockets (as genie run --tcp-congestion; default: the hosts')");
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
  calibrate->add_option("--tcp-congestion", a->tcp_congestion,
                        "Measure with this TCP congestion control on the scan's connections "
                        "(as genie run --tcp-congestion; default: the hosts'). Calibrations "
                        "under different settings are kept side by side");
  calibrate
      ->add_option("--hosts", a->scan_hosts,
                   "Scan only the first N hosts, where a run of N ranks (one per host) runs: "
                   "on hosts sharing this machine's cores the all-hosts figures depend on how "
                   "many send (default: every host)")
      ->check(genie::cli::IntIn(2, 4096));
  yml->add_option("-o,--output", a->output, "Write here instead of stdout");

  return [=]() -> int {
    if (up->parsed()) return Up(*a);
    if (down->parsed()) {
      genie::Status st = genie::driver::TestbedDown(a->name);
      return st.ok() ? 0 : Fail("down", st);
    }
    if (status->parsed()) return Status(*a);
    if (list->parsed()) {
      fmt::print("{}", genie::driver::TestbedListText());
      return 0;
    }
    if (fault->parsed()) return Fault(*a);
    if (yml->parsed()) return NetworkYml(*a);
    if (calibrate->parsed()) return Calibrate(*a);
    return 2;
  };
}
