#include "genie/driver/testbed_commands.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "genie/common/units.h"
#include "genie/driver/testbed_calibrate.h"
#include "genie/testbed/calibration.h"
#include "genie/testbed/commands.h"
#include "genie/testbed/control.h"
#include "genie/testbed/injector.h"
#include "genie/testbed/layout.h"

namespace genie::driver {

namespace tb = testbed;

Status TestbedUp(const tb::TestbedSpec& spec, bool dry_run) {
  if (dry_run) {
    GENIE_ASSIGN_OR_RETURN(tb::Layout layout, tb::LayOut(spec));
    for (const auto& cmd : tb::UpCommands(layout)) fmt::print("{}\n", tb::ToString(cmd));
    return Status::Ok();
  }
  tb::SystemShell shell;
  const auto started = std::chrono::steady_clock::now();
  GENIE_ASSIGN_OR_RETURN(tb::Layout layout, tb::Up(spec, shell));
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  fmt::print(
      "testbed {}: {} hosts ({}), {} links at {}{}, {} NIC(s) per host, TCP {}, up in {:.1f} s\n",
      spec.name, layout.hosts.size(), spec.TopologyText(), layout.links.size(),
      FormatBitRate(spec.rate_bps),
      spec.spine_rate_bps ? " (leaf-spine links at " + FormatBitRate(*spec.spine_rate_bps) + ")"
                          : std::string(),
      spec.nics, layout.spec.tcp_congestion.empty() ? "?" : layout.spec.tcp_congestion, secs);
  fmt::print("  hosts: {}-h0 .. {}-h{} (h0 at {}); description: {}\n", spec.name, spec.name,
             layout.hosts.size() - 1, layout.RendezvousAddress(), tb::DescriptionPath(spec.name));
  fmt::print("  run on it: genie launch --testbed {} -n {} -- run WORKLOAD\n", spec.name,
             layout.hosts.size());
  return Status::Ok();
}

Status TestbedDown(const std::string& name) {
  tb::SystemShell shell;
  GENIE_RETURN_IF_ERROR(tb::CheckCanBuild(shell));
  GENIE_RETURN_IF_ERROR(tb::Down(name, shell));
  fmt::print("testbed {}: removed\n", name);
  return Status::Ok();
}

std::string TestbedListText() {
  std::string out;
  for (const auto& n : tb::List()) {
    auto l = tb::Load(n);
    if (l.ok()) {
      out += fmt::format("{:<16} {:<18} {} hosts, {}\n", n, l->spec.TopologyText(),
                         l->hosts.size(), FormatBitRate(l->spec.rate_bps));
    } else {
      out += fmt::format("{:<16} (damaged: {})\n", n, l.status().message());
    }
  }
  return out;
}

Status TestbedFault(const std::string& name, const tb::Fault& f) {
  GENIE_ASSIGN_OR_RETURN(tb::Layout layout, tb::Load(name));
  tb::SystemShell shell;
  tb::Injector injector(layout, shell);
  GENIE_RETURN_IF_ERROR(injector.Check(f));
  // Timed faults (--for, --flap) play here, in the foreground.
  const auto start = std::chrono::steady_clock::now();
  for (const auto& action : tb::Expand(f)) {
    std::this_thread::sleep_until(start + std::chrono::nanoseconds(action.offset));
    GENIE_RETURN_IF_ERROR(injector.Do(action));
    fmt::print("testbed {}: {} {}\n", name, action.undo ? "undone:" : "applied:",
               action.fault.Describe());
  }
  return Status::Ok();
}

Status TestbedClearFaults(const std::string& name) {
  GENIE_ASSIGN_OR_RETURN(tb::Layout layout, tb::Load(name));
  tb::SystemShell shell;
  tb::Injector injector(layout, shell);
  GENIE_RETURN_IF_ERROR(injector.ClearAll());
  fmt::print(
      "testbed {}: every fault cleared (links up, shaping as described, no rules, no "
      "helpers)\n",
      name);
  return Status::Ok();
}

Result<std::string> TestbedNetworkYmlNow(const std::string& name, int ranks_per_host,
                                         double one_way_latency_ns,
                                         const std::string& tcp_congestion, std::string* note) {
  GENIE_ASSIGN_OR_RETURN(testbed::Layout layout, testbed::Load(name));
  testbed::SystemShell shell;
  auto want = ScanSettings(layout, tcp_congestion, shell);
  if (!want.ok()) {
    return want.status().WithContext(fmt::format(
        "testbed {}: reading the network settings its calibration is chosen by", name));
  }
  std::optional<testbed::ChosenCalibration> chosen;
  GENIE_ASSIGN_OR_RETURN(std::string yml,
                         testbed::TestbedNetworkYml(name, ranks_per_host, one_way_latency_ns,
                                                    note, &*want, &chosen));
  if (note && chosen && !chosen->matched) {
    std::string under;
    for (const auto& [k, v] : *want) under += (under.empty() ? "" : "; ") + k + " " + v;
    *note += fmt::format("; none of its {} calibration(s) was measured under its settings now "
                         "({}): the latest stands in (genie testbed calibrate {}{} measures them)",
                         chosen->kept, under, name,
                         tcp_congestion.empty() ? "" : " --tcp-congestion " + tcp_congestion);
  }
  return yml;
}

}  // namespace genie::driver
