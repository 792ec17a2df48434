// The driver behind `genie run`: one process runs one rank of a workload over the real network
// — prepare the run (traces, configs, plans), join the job (rendezvous, connections, clock
// offsets), walk the graph for every iteration (IterationDriver + Watchdog), record every op to
// the rank's stream, end the job in order or tell every peer why not, and have the right rank
// merge the streams into results (run_results.h). Started with no launcher around it, the
// driver launches the workload's ranks on this machine itself.
//
// The CLI only fills RunOptions from flags. Exit codes (docs/cli.md): 0 ok, 1 the workload or
// the network failed, 2 bad input, 75 another rank failed (launch::kExitPeerFailed).
// Threading: the process's main thread.
#pragma once

#include <string>
#include <vector>

#include "genie/launch/rank_env.h"
#include "genie/real_backend/real_backend.h"
#include "genie/runtime/run_setup.h"

namespace genie::driver {

struct RunOptions {
  runtime::SetupFlags setup;
  std::string output = "genie-results";
  std::string trace_out;
  int iterations = 1;
  int warmup = 0;
  std::string bind = "127.0.0.1";
  std::string intra_host;              // network.yml of one host, modelled instead of sent
  std::string network_model = "flow";  // the prediction's: unaware | aware | flow
  std::string rendezvous;              // overrides the launcher's
  std::string clock_sync = "auto";
  std::string job_id;
  std::string tcp_congestion;
  real_backend::TransportChoice transport;  // --transport, --fabric-provider/-domain/-rma
  std::string peer_timeout = "30s";
  int spin_us = -1;
  std::string testbed;  // the `genie testbed` the run is on (rank 0 records its counters)
  // --predict: per-iteration measured beside the flow model's prediction (network from
  // --network or the testbed); --baseline: beside an earlier healthy run's results.json.
  bool predict = false;
  std::string baseline;
  std::string comparison_csv;     // --csv: the first comparison as CSV (report::ToCsv)
  double flag_threshold = 0.25;   // report::kDefaultFlagThreshold (kept in step)
  bool localize = false;          // --localize: probe the used links after the run (localize.h)
  std::string report;             // --report: the HTML page of results.json (report/html/)
  std::vector<std::string> argv;  // the command line: provenance, and the local self-launch
};

// `genie run`: finds the rank from the launcher's environment, or launches every rank here.
int Run(const RunOptions& options);

// One rank of the job, `env` saying which.
int RunRank(const RunOptions& options, const launch::RankEnv& env);

}  // namespace genie::driver
