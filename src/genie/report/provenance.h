// Provenance: what a results file needs to be trusted and reproduced later — genie's version,
// the command line, the configs as used, the transport and its settings, and the machine: kernel
// (uname), TCP and socket sysctls from /proc/sys, hostname, and the time (UTC, ISO 8601).
// `genie results strip` removes the per-run fields (time, hostname, command line). Reads files
// under /proc; any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace genie::report {

// The sysctls recorded (paths under /proc/sys); unreadable ones are left out.
const std::vector<std::string>& RecordedSysctls();

// configs: the ASTRA-sim/genie configs as used (JSON; e.g. {"system": {...}, "network": {...}});
// transport: name and settings (e.g. {"name": "tcp", "channels": 4}); argv: the command line.
nlohmann::json Provenance(const nlohmann::json& configs,
                          const nlohmann::json& transport = nlohmann::json::object(),
                          const std::vector<std::string>& argv = {});

}  // namespace genie::report
