// The driver behind `genie simulate`: the workload on a modelled network (virtual clock,
// ASTRA-sim's analytical semantics), every rank in this process. Prints ASTRA-sim's per-rank
// lines and writes results.json / a Chrome trace as asked. The CLI only fills SimulateOptions.
// Exit codes: 0 ok, 1 the workload failed (deadlock), 2 bad input. Main thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "genie/runtime/run_setup.h"
#include "genie/synth/job.h"

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
  bool all_ranks = false;              // a sys[r] line for every rank, however many
  // "0,7,100-103": the ranks whose every op is kept (results.json, Chrome trace) and whose
  // sys[r] line is always printed; empty = every rank's ops.
  std::string ranks_of_interest;
  // A synth description to run instead of trace files (genie synth's flags): each rank's graph
  // is emitted in memory when the simulation opens it, nothing is written to disk.
  std::shared_ptr<const synth::Job> synth;
  std::string synth_name;  // "llama3-70b tp8 pp8 dp16" (provenance, messages)
  // auto: with a synth description, simulate one copy of the data-parallel replicas when the
  // network and the groups allow it exactly (docs/scale.md, "Symmetry reduction"), saying
  // why when they do not; off: every rank.
  std::string symmetry = "auto";
  // A progress line on stderr every few seconds of a long run (simulated time, events/s).
  bool progress = true;
  // --jobs: a jobs file (driver/jobs_spec.h): every run: job of it on the hosts' network
  // (setup.network_path: one NPU per host; else the file's testbed), each predicted together
  // and alone (simulate_jobs.cc). `model_given`: --network-model was passed (else flow).
  std::string jobs;
  bool model_given = false;
};

// Parses a rank list "0,7,100-103" (ranks < world_size); errors say which item is wrong.
Result<std::vector<int>> ParseRankList(const std::string& text, int world_size);

int RunSimulate(const SimulateOptions& options);
// genie simulate --jobs: the table of every job's step together and alone, and results.json.
int RunSimulateJobs(const SimulateOptions& options);

}  // namespace genie::driver
