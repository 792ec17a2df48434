#include "genie/driver/testbed_calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "genie/common/units.h"
#include "genie/common/usable_cores.h"
#include "genie/config/network_config.h"
#include "genie/driver/testbed_placement.h"
#include "genie/record/cpu_pressure.h"
#include "genie/record/host_settings.h"
#include "genie/report/doctor_findings.h"
#include "genie/report/network_settings.h"
#include "genie/sim/flow_model.h"
#include "genie/testbed/control.h"
#include "genie/testbed/counters.h"
#include "genie/testbed/ecmp.h"
#include "genie/testbed/host_sysctls.h"

namespace genie::driver {

namespace tb = testbed;

namespace {

// While the scan runs, Ctrl-C is the scan's: as std::system did, this process ignores SIGINT
// and SIGQUIT (the launcher, which restores them for itself, stops its ranks and exits), then
// says the scan wrote no figures.
class IgnoreInterrupts {
 public:
  IgnoreInterrupts() {
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &int_);
    sigaction(SIGQUIT, &ignore, &quit_);
  }
  ~IgnoreInterrupts() {
    sigaction(SIGINT, &int_, nullptr);
    sigaction(SIGQUIT, &quit_, nullptr);
  }
  IgnoreInterrupts(const IgnoreInterrupts&) = delete;
  IgnoreInterrupts& operator=(const IgnoreInterrupts&) = delete;

 private:
  struct sigaction int_ = {}, quit_ = {};
};

tb::CommandResult RunScan(const tb::Argv& argv) {
  IgnoreInterrupts ignore;
  tb::SystemShell shell;
  return shell.Run(argv);
}

// Retransmission timeouts the hosts' TCP counted so far, all hosts together; nullopt when the
// counters cannot be read.
std::optional<uint64_t> HostTimeouts(const tb::Layout& layout) {
  tb::SystemShell shell;
  auto counters = tb::ReadCounters(layout, shell);
  if (!counters.ok()) return std::nullopt;
  uint64_t sum = 0;
  for (const auto& h : counters->hosts) sum += h.timeouts;
  return sum;
}

}  // namespace

std::string MachineNote(const tb::Layout& layout, int hosts, int rails, int cores) {
  // What the flow model gives the machine (testbed/layout.h, machine_bandwidth) against what
  // every host sending at its links' rate asks of it, a byte between hosts at the model's cost.
  const double machine = cores * config::kHostLoopbackGbps * (1 << 30) / 1e9;  // GiB/s to GB/s
  const double ask = static_cast<double>(hosts) * std::max(1, rails) *
                     static_cast<double>(layout.HostLinkRate()) / 8e9 *
                     sim::FlowModel::kFabricByteCost;
  if (cores <= 0 || ask <= machine) return "";
  return fmt::format(
      "its {} hosts sending at {} at once ask {:.1f} GB/s of this machine's "
      "TCP copying, which its {} core(s) give about {:.1f} (a byte between hosts costs {} "
      "loopback bytes): where every host sends, the cores, not the links, set the pace. The "
      "prediction shares them (machine_bandwidth) but not how evenly the kernel schedules them "
      "(docs/accuracy.md: star:8 at 4 Gbit/s); a lower rate or fewer hosts keep the links the "
      "bottleneck",
      hosts, FormatBitRate(layout.HostLinkRate()), ask, cores, machine,
      sim::FlowModel::kFabricByteCost);
}

testbed::Argv CalibrationScanArgv(const std::string& genie_exe, const std::string& name, int hosts,
                                  bool accept_findings, const std::string& json,
                                  const std::string& tcp_congestion) {
  testbed::Argv argv = {genie_exe,      "launch",
                        "--testbed",    name,
                        "-n",           std::to_string(hosts),
                        "--",           "doctor",
                        "--bytes",      "16MiB",
                        "--ring-steps", accept_findings ? "always" : "healthy",
                        "--json",       json};
  if (!tcp_congestion.empty()) {
    argv.push_back("--tcp-congestion");
    argv.push_back(tcp_congestion);
  }
  return argv;
}

Result<std::map<std::string, std::string>> ScanSettings(const tb::Layout& layout,
                                                        const std::string& tcp_congestion,
                                                        tb::Shell& shell) {
  GENIE_ASSIGN_OR_RETURN(std::vector<tb::HostSysctls> sysctls, tb::ReadHostSysctls(layout, shell));
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& h : sysctls) {
    const bool socket = !tcp_congestion.empty();
    hosts.push_back(
        {{"host", h.host},
         {"tcp_congestion", socket ? tcp_congestion : h.tcp_congestion},
         {"tcp_congestion_source", socket ? record::kFromSocketOption : record::kFromHostDefault},
         {"tcp_congestion_default", h.tcp_congestion},
         {"tcp_ecn", h.tcp_ecn}});
  }
  GENIE_ASSIGN_OR_RETURN(tb::Counters counters, tb::ReadCounters(layout, shell));
  return report::SummaryOf(report::NetworkSettingsOf(std::move(hosts), counters.QdiscsJson()));
}

std::string FormatCalibration(const std::string& name, const tb::Layout& layout,
                              const tb::Calibration& cal) {
  std::string out = fmt::format(
      "testbed {}: one pair: goodput {:.3f} of {} (median pair {:.4f} GB/s), message "
      "overhead {:.1f} us (median round trip {:.1f} us)\n",
      name, cal.goodput, FormatBitRate(layout.HostLinkRate()), cal.median_gbps,
      cal.message_overhead_ns / 1e3, cal.median_rtt_us);
  if (cal.all_hosts_goodput > 0) {
    const int all = static_cast<int>(layout.hosts.size());
    const int scanned = cal.ScannedHosts();
    out += fmt::format(
        "testbed {}: all hosts at once (ring steps): goodput {:.3f} ({:.4f} GB/s), "
        "{:.1f} us per step{}\n",
        name, cal.all_hosts_goodput, cal.all_hosts_gbps, cal.all_hosts_overhead_ns / 1e3,
        scanned > 0 && scanned < all ? fmt::format(", the first {} of its {} hosts", scanned, all)
                                     : "");
  }
  const tb::MeasuredCosts costs = cal.Costs();
  out += fmt::format(
      "testbed {}: the description uses {} (goodput {:.3f}, message overhead {:.1f} us); "
      "saved in {}; `genie testbed network-yml {}` and `genie run --predict` on it use "
      "them\n",
      name, cal.basis, costs.goodput, costs.message_overhead_ns / 1e3, tb::CalibrationPath(name),
      name);
  if (!cal.settings.empty()) {
    std::string under;
    for (const auto& [k, v] : cal.settings) under += (under.empty() ? "" : "; ") + k + " " + v;
    out += fmt::format(
        "testbed {}: measured under {}; a run under other settings is predicted with it only "
        "when none was measured under its own, and says so\n",
        name, under);
  }
  const std::string timeouts = tb::TimeoutNote(cal, name);
  if (!timeouts.empty()) out += timeouts + "\n";
  const std::string incast = tb::IncastSendNote(cal, name, report::kIncastSendShare);
  if (!incast.empty()) out += incast + "\n";
  return out;
}

Status CalibrateTestbed(const CalibrateOptions& a) {
  GENIE_ASSIGN_OR_RETURN(tb::Layout layout, tb::Load(a.name));
  const int all = static_cast<int>(layout.hosts.size());
  if (a.hosts < 0 || a.hosts == 1 || a.hosts > all) {
    return Status::InvalidArgument(
        fmt::format("--hosts {}: testbed {} has {} hosts; give 2 to {} (the first N are scanned)",
                    a.hosts, a.name, all, all));
  }
  const int hosts = a.hosts > 0 ? a.hosts : all;
  const std::string json = tb::StateDir() + "/" + a.name + ".calibration-scan.json";
  fmt::print("testbed {}: measuring every pair of its {} hosts (genie doctor) ...\n", a.name,
             hosts < all ? fmt::format("first {} of {}", hosts, all) : std::to_string(all));
  std::fflush(stdout);
  // The scan's own messages are kept aside: a doctor with findings exits 1 (its launcher says
  // "rank 0 failed"), which is no failure here; they are shown when the scan wrote nothing.
  // The scan runs a rank per host on this machine's few cores: how contended they were says
  // whether its figures are the links' or the CPU's.
  // The settings the scan runs under: the calibration is kept for runs under the same ones.
  tb::SystemShell settings_shell;
  auto settings = ScanSettings(layout, a.tcp_congestion, settings_shell);
  if (!settings.ok()) {
    fmt::print(
        "testbed {}: its network settings could not be read ({}); the calibration is "
        "kept without them\n",
        a.name, settings.status().message());
  }
  const std::optional<uint64_t> timeouts_before = HostTimeouts(layout);
  const record::CpuPressureReading cpu_before = record::ReadCpuPressure();
  const tb::CommandResult scan = RunScan(
      CalibrationScanArgv(SelfExe(), a.name, hosts, a.accept_findings, json, a.tcp_congestion));
  const record::CpuPressure cpu = record::PressureBetween(cpu_before, record::ReadCpuPressure());
  const std::optional<uint64_t> timeouts_after = HostTimeouts(layout);
  nlohmann::json doc;
  {
    std::ifstream in(json);
    doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }
  std::error_code ec;
  std::filesystem::remove(json, ec);
  if (doc.is_discarded()) {
    std::cerr << scan.output << scan.errors;
    // As std::system reported it: the exit status in wait()'s encoding (-1: not started).
    const int rc = scan.exit_code < 0 ? -1 : scan.exit_code << 8;
    return Status::Unavailable(
        fmt::format("the scan wrote no figures (genie doctor exited with {}); run "
                    "`genie launch --testbed {} -n {} -- doctor` to see why",
                    rc, a.name, hosts));
  }
  auto calibrated = tb::CalibrationFromDoctor(layout, doc, a.accept_findings, a.basis);
  if (!calibrated.ok() && cpu.contended()) {
    // What the scan found may be the CPU's: a rank that waits for a core measures its link slow.
    return calibrated.status().WithDetail(fmt::format(
        "The CPU is the likely cause, not the network: during the scan {}. Calibrate again when "
        "the machine is quieter (fewer programs beside it, or fewer hosts per core)",
        cpu.Describe()));
  }
  if (!calibrated.ok()) return calibrated.status();
  tb::Calibration cal = std::move(*calibrated);
  cal.cpu_pressure = cpu.ToJson();
  if (timeouts_before && timeouts_after && *timeouts_after >= *timeouts_before) {
    cal.scan_timeouts = static_cast<int64_t>(*timeouts_after - *timeouts_before);
  }
  if (settings.ok()) cal.settings = std::move(*settings);
  if (doc.contains("findings") && doc["findings"].is_array()) {
    for (const auto& f : doc["findings"]) {
      fmt::print("testbed {}: accepted finding: {}\n", a.name, f.value("text", std::string("?")));
    }
  }
  std::string ecmp;
  if (tb::EcmpKnown(layout)) {
    tb::SystemShell shell;
    auto routes = tb::QueryEcmpRoutes(layout, shell);
    if (routes.ok()) {
      cal.ecmp_routes = nlohmann::json::array();
      for (const auto& r : *routes) cal.ecmp_routes.push_back({r.src_host, r.dst_host, r.spine});
      ecmp = fmt::format(
          "testbed {}: ECMP l3: the spine of each of its {} pairs across leaves is "
          "known (ip route get, recorded); the flow model routes them there\n",
          a.name, routes->size());
    } else {
      ecmp = fmt::format("testbed {}: ECMP l3 but {}\n", a.name, routes.status().message());
    }
  }
  GENIE_RETURN_IF_ERROR(tb::SaveCalibration(a.name, cal));
  fmt::print("{}{}", FormatCalibration(a.name, layout, cal), ecmp);
  const std::string machine = MachineNote(layout, hosts, /*rails=*/1, UsableCores());
  if (!machine.empty()) fmt::print("testbed {}: note: {}\n", a.name, machine);
  if (cpu.contended()) {
    fmt::print(
        "testbed {}: note: the CPU was contended during the scan ({}): the figures carry this "
        "machine's CPU as well as the links (a larger per-step cost, a lower goodput), so a "
        "prediction made with them holds while the machine stays as loaded; calibrate again "
        "when it is quieter for the network alone\n",
        a.name, cpu.Describe());
  }
  return Status::Ok();
}

}  // namespace genie::driver
