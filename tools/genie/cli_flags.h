// Command-line flags shared by the commands that execute a workload (simulate, run): the
// workload and its ASTRA-sim configuration files, under genie's short names and ASTRA-sim's
// long ones, so an ASTRA-sim command line works as it is. Main thread only.
#pragma once

#include <CLI/CLI.hpp>

#include "genie/runtime/run_setup.h"

namespace genie::cli {

inline void AddWorkloadFlags(CLI::App& app, runtime::SetupFlags& f) {
  app.add_option("workload", f.workload, "Workload: a folder or <prefix> of <prefix>.<rank>.et files");
  app.add_option("--workload,--workload-configuration", f.workload, "Same as the positional workload");
  app.add_option("--system,--system-configuration", f.system_path, "ASTRA-sim system.json");
  app.add_option("--memory,--remote-memory-configuration", f.memory_path, "ASTRA-sim memory.json");
  app.add_option("--comm-group,--comm-group-configuration", f.comm_group,
                 "Comm-group JSON {\"<group>\": [ranks]} (default: workload.json / "
                 "comm_group.json beside the traces)");
  app.add_option("--ctrl-deps", f.ctrl_deps, "Count ctrl_deps: on, off or auto")
      ->check(CLI::IsMember({"on", "off", "auto"}));
  app.add_option("--default-comm-size", f.default_comm_size,
                 "Size for collectives whose trace has no comm_size (e.g. 1MiB)");
  app.add_option("--channels", f.channels, "Parallel flows per peer pair (NCCL channels)");
  app.add_option("--slice", f.slice, "Largest message on the wire (e.g. 512KiB; default none)");
}

}  // namespace genie::cli
