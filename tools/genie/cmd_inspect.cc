// `genie inspect <workload>`: summarise a Chakra workload and check that it can run.
// Exit 0 when runnable (warnings allowed), 1 with the list of problems otherwise, 2 when the
// workload cannot be found or the arguments are wrong.
#include <iostream>

#include <spdlog/spdlog.h>

#include "genie/common/units.h"
#include "genie/trace/workload_files.h"
#include "genie/workload/read_options.h"
#include "genie/workload/workload_summary.h"
#include "tools/genie/command.h"

GENIE_COMMAND(inspect, "Summarise a Chakra workload and check that it can run") {
  struct Args {
    std::string workload, workload_flag, comm_group, ctrl_deps = "auto", default_comm_size;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  app.add_option("workload", args->workload,
                 "Folder of <prefix>.<rank>.et files, or the <prefix> path");
  app.add_option("--workload,-w", args->workload_flag, "Same as the positional workload");
  app.add_option("--comm-group", args->comm_group,
                 "Comm-group JSON {\"<id>\": [ranks]} (default: workload.json or "
                 "comm_group.json beside the traces)");
  app.add_option("--ctrl-deps", args->ctrl_deps,
                 "Which ctrl_deps count: auto (drop missing/cyclic ones, warn), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_option("--default-comm-size", args->default_comm_size,
                 "Size for collectives without comm_size (e.g. 1MiB); otherwise an error");
  app.add_flag("--json", args->json, "Machine-readable JSON on stdout");
  return [args]() -> int {
    std::string arg = !args->workload_flag.empty() ? args->workload_flag : args->workload;
    if (arg.empty()) {
      std::cerr << "genie inspect: name a workload (folder or <prefix>), e.g. genie inspect "
                   "data/traces/astra-sim/microbenchmarks/all_reduce/8npus_1MB\n";
      return 2;
    }
    genie::workload::ReadOptions options;
    auto mode = genie::workload::ParseCtrlDeps(args->ctrl_deps);
    if (!mode.ok()) {
      std::cerr << "genie inspect: " << mode.status().message() << "\n";
      return 2;
    }
    options.ctrl_deps = *mode;
    if (!args->default_comm_size.empty()) {
      auto bytes = genie::ParseBytes(args->default_comm_size);
      if (!bytes.ok()) {
        std::cerr << "genie inspect: --default-comm-size: " << bytes.status().message() << "\n";
        return 2;
      }
      options.default_comm_size = *bytes;
    }
    auto files = genie::trace::FindWorkload(arg, args->comm_group);
    if (!files.ok()) {
      std::cerr << "genie inspect: " << files.status().message() << "\n";
      return 2;
    }
    auto summary = genie::workload::InspectWorkload(*files, options);
    if (!summary.ok()) {
      std::cerr << "genie inspect: " << summary.status().message() << "\n";
      return 2;
    }
    if (args->json) {
      std::cout << genie::workload::ToJson(*summary).dump(2) << "\n";
    } else {
      std::cout << genie::workload::FormatText(*summary);
    }
    return summary->runnable() ? 0 : 1;
  };
}
