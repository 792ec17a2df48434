// ReadOptions: how a rank's trace is turned into a dependency graph and Ops — which ctrl_deps
// count and what size a collective without comm_size gets. Set from the command line
// (--ctrl-deps, --default-comm-size). Plain value type; any thread.
#pragma once

#include <optional>
#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::workload {

struct ReadOptions {
  // kOn: ctrl_deps always count; a missing target or a cycle is an error.
  // kOff: only data_deps count.
  // kAuto (default): ctrl_deps count unless they name missing nodes (reported once, then those
  //   are ignored) or form a cycle (one warning listing it, then the rank uses data_deps only).
  enum class CtrlDeps { kAuto, kOn, kOff } ctrl_deps = CtrlDeps::kAuto;
  std::optional<Bytes> default_comm_size;   // --default-comm-size
};

// "auto" | "on" | "off" (also true/false/1/0).
Result<ReadOptions::CtrlDeps> ParseCtrlDeps(const std::string& text);
const char* CtrlDepsName(ReadOptions::CtrlDeps mode);

}  // namespace genie::workload
