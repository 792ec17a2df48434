// Simulation: every rank of a workload executed in one process on a SimBackend (virtual clock,
// modelled network). Owns the ranks' graphs and executors for the duration of Simulate().
// Detects deadlock (events run out while ranks are unfinished) and reports what each stuck
// rank was waiting for. Main thread only.
#pragma once

#include <vector>

#include "genie/record/recorder.h"
#include "genie/runtime/run_setup.h"
#include "genie/runtime/sim_backend.h"

namespace genie::runtime {

struct SimulationStats {
  std::vector<record::RankSummary> ranks;  // one per rank, rank order
  TimeNs end_ns = 0;                       // virtual time when the last rank finished
  uint64_t events = 0;
};

// Runs the workload described by `setup` on `network` with the chosen model. Records every op
// into `recorder` (may be null).
Result<SimulationStats> Simulate(const RunSetup& setup, const config::NetworkConfig& network,
                                 sim::NetworkModelKind model, record::Recorder* recorder);

}  // namespace genie::runtime
