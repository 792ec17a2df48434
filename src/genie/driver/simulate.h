// The driver behind `genie simulate`: the workload on a modelled network (virtual clock,
// ASTRA-sim's analytical semantics), every rank in this process. Prints ASTRA-sim's per-rank
// lines and writes results.json / a Chrome trace as asked. The CLI only fills SimulateOptions.
// Exit codes: 0 ok, 1 the workload failed (deadlock), 2 bad input. Main thread only.
#pragma once

#include <string>

#include "genie/runtime/run_setup.h"

namespace genie::driver {

struct SimulateOptions {
  runtime::SetupFlags setup;
  std::string model = "unaware";       // unaware | aware | flow
  std::string comm_streams = "rank";   // rank (ASTRA-sim) | concurrent (as genie run)
  std::string output;                  // folder for results.json; empty = none
  std::string trace_out;
  int iterations = 1;
  int warmup = 0;
  bool quiet = false;                  // no sys[r] lines
};

int RunSimulate(const SimulateOptions& options);

}  // namespace genie::driver
