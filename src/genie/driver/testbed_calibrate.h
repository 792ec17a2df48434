// Testbed calibration: `genie testbed calibrate NAME` runs `genie doctor` on the testbed, one
// rank per host (this program again, through `genie launch --testbed`, as a child process
// with an argument vector), turns its figures into the testbed's calibration
// (testbed/calibration.h: goodput and per-message cost, one pair alone and every host at once),
// records a leaf-spine's ECMP routes beside them, saves it, and says what was measured and what
// the network description now carries.
//
// Threading: the CLI's main thread; it waits for the scan.
#pragma once

#include <map>
#include <string>

#include "genie/common/status.h"
#include "genie/testbed/calibration.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::driver {

struct CalibrateOptions {
  std::string name = "genie";
  bool accept_findings = false;  // calibrate even when the scan finds a slow host or loss
  std::string basis = testbed::kBasisAllHosts;
  // The congestion control the scan's connections use (genie's socket option, as `genie run
  // --tcp-congestion`); "" = the hosts' default. Recorded in the calibration's settings.
  std::string tcp_congestion;
  // Scan the first `hosts` hosts only (h0.., one rank each, as `genie launch --testbed -n
  // hosts` places a run); 0 = every host. The all-hosts figures of namespaces sharing this
  // machine's cores follow how many hosts send (star:16 at 1 Gbit/s: goodput 0.887 and 83 us
  // per step with 16, 0.938 and 14 us with 8).
  int hosts = 0;
};

// Prints its progress and result on stdout; the scan's own output goes to stderr when the scan
// wrote no figures. The error names the testbed and says what to run to see why.
Status CalibrateTestbed(const CalibrateOptions& options);

// The scan: `genie_exe launch --testbed NAME -n HOSTS -- doctor --bytes 16MiB --ring-steps
// healthy|always --json JSON [--tcp-congestion CC]` (accepted findings still need the ring
// steps, which the doctor skips on a scan with findings unless told `always`).
testbed::Argv CalibrationScanArgv(const std::string& genie_exe, const std::string& name, int hosts,
                                  bool accept_findings, const std::string& json,
                                  const std::string& tcp_congestion = "");

// The network settings a scan with `tcp_congestion` (genie's socket option; "" = each host's
// default) runs under, summarised as a run's are (report/network_settings.h): the hosts'
// sysctls read in their namespaces, the links' qdiscs as tc lists them.
Result<std::map<std::string, std::string>> ScanSettings(const testbed::Layout& layout,
                                                        const std::string& tcp_congestion,
                                                        testbed::Shell& shell);

// What calibrate says once the calibration is saved: one pair's figures, every host's (when the
// scan had ring steps), which set the description carries and where it is kept.
std::string FormatCalibration(const std::string& name, const testbed::Layout& layout,
                              const testbed::Calibration& calibration);

// What calibrate says when `hosts` sending at the links' rate on `rails` NICs each at once ask
// more TCP copying of this machine's `cores` than the flow model gives them (machine_bandwidth:
// cores x config::kHostLoopbackGbps; a byte between hosts at FlowModel::kFabricByteCost): its
// cores, not the links, then set the pace (a sentence, "its 8 hosts ..."; calibrate and
// --predict say it, the latter for its own job's hosts). "" otherwise.
std::string MachineNote(const testbed::Layout& layout, int hosts, int rails, int cores);

}  // namespace genie::driver
