// Calibration: what a testbed's links really give, measured (`genie testbed calibrate NAME`
// runs `genie doctor` on it, one rank per host) and kept beside its description
// (StateDir()/NAME.calibration.json, removed by Down), so the network description the flow
// model predicts with (ToNetworkYml, `genie run --predict` on the testbed) carries the measured
// goodput and per-message cost instead of defaults:
//  * goodput = the median pair's goodput (one direction, alone on its path) / the host links'
//    rate: what TCP and genie's transport get of a link (on a leaf-spine, the median of the
//    pairs within a leaf: pairs across leaves may be held by slower leaf-spine links);
//  * message_overhead = half the median small-message round trip: the per-message cost of the
//    kernel stack, the namespaces' veth and bridge and genie's event loop, which on a testbed
//    is all software (the per-link latency is left at 1 ns; a leaf-spine's extra hops are not
//    separated from it).
// A scan with findings (a slow host, loss) is refused: calibrating on a fault would teach the
// model the fault. Pure but for the file; main thread of the CLI.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "genie/common/status.h"
#include "genie/testbed/layout.h"

namespace genie::testbed {

struct Calibration {
  double goodput = 0;              // fraction of the host links' rate
  double message_overhead_ns = 0;  // per message, added once
  double median_gbps = 0;          // what goodput was derived from (GB/s = 1e9 B/s)
  double median_rtt_us = 0;
  std::string measured;            // when (ISO 8601 UTC)
  nlohmann::json ToJson() const;
};

// From `genie doctor --json`'s document for testbed `layout`. Fails when the scan found
// anomalies (named in the message) unless `accept_findings`.
Result<Calibration> CalibrationFromDoctor(const Layout& layout, const nlohmann::json& doctor,
                                          bool accept_findings = false);

std::string CalibrationPath(const std::string& name);
Status SaveCalibration(const std::string& name, const Calibration& c);
// nullopt when testbed `name` was never calibrated; an error when the file is unreadable.
Result<std::optional<Calibration>> LoadCalibration(const std::string& name);

// Testbed `name` as the network.yml the models read (ToNetworkYml), its calibration's
// goodput and message overhead included when it has one. `one_way_latency_ns` < 0: the
// default, 30 µs per link uncalibrated (the bridge's hops, order of magnitude), 1 ns calibrated
// (the measured overhead holds the whole small-message time). `note`, when given, says which.
Result<std::string> TestbedNetworkYml(const std::string& name, int ranks_per_host,
                                      double one_way_latency_ns = -1, std::string* note = nullptr);

}  // namespace genie::testbed
