// Simulation: every rank of a workload executed in one process on a SimBackend (virtual clock,
// modelled network), each rank driven by the same IterationDriver as a real run's. Owns the
// ranks' graphs and drivers for the duration of Simulate().
// Detects deadlock (events run out while ranks are unfinished) and reports what each stuck
// rank was waiting for. Main thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "genie/driver/iteration_driver.h"
#include "genie/record/recorder.h"
#include "genie/runtime/executor.h"
#include "genie/runtime/run_setup.h"
#include "genie/sim/symmetry.h"
#include "genie/sim_backend/sim_backend.h"

namespace genie::driver {

// Simulated ranks start together at virtual time 0: no barrier around the iterations.
inline IterationPolicy SimulatedIterations(int iterations = 1, int warmup = 0) {
  return IterationPolicy{warmup, iterations, /*barrier_first=*/false, /*barrier_last=*/false};
}

struct SimulationStats {
  std::vector<record::RankSummary> ranks;  // per iteration (warm-ups < 0), then rank
  TimeNs end_ns = 0;                       // virtual time when the last rank finished
  uint64_t events = 0;
  uint64_t messages = 0;  // point-to-point messages sent on the simulated network
  uint64_t bytes = 0;     // their payload bytes
  // Remote-memory accesses that waited in a PER_NODE / POOL queue, and their summed wait.
  uint64_t memory_waited = 0;
  TimeNs memory_wait_ns = 0;
  // When each compute fault (--faults) took effect on each rank, by rank.
  std::vector<compute::ComputeFaultEvent> compute_fault_events;
};

// What a measured iteration fixes for its prediction: the hosts' part of its timing, so that
// where the prediction differs, the difference is the network's.
struct MeasuredIteration {
  // Per rank (empty: all 0): start rank r at virtual time start_ns[r] instead of 0, the
  // iteration's start skew, so that a prediction starts each rank when the real one did.
  std::vector<TimeNs> start_ns;
  // Per rank (empty: unknown): how long rank r's links had been idle when it started (since it
  // finished the iteration before), which on shaped links (network.yml `burst`) sets how full
  // their buckets are; unknown = full.
  std::vector<TimeNs> idle_ns;
  // Per rank (empty: none): the order it issued each group's collectives in
  // (Executor::SetIssueOrder).
  std::vector<runtime::IssueOrder> issue_order;
  // Per rank (empty: 0): how long its connections had been open when it started (the hosts'
  // bbr probes on a grid from then: network.yml probe_rtt, sim/flow_model.h); negative: they
  // open that long after.
  std::vector<TimeNs> since_open_ns;
  // Per rank (empty: none recorded): when the latest of its connections' bbr PROBE_RTT
  // episodes began in the measured iteration, from the iteration's first start (-1: none).
  std::vector<TimeNs> probe_at_ns;
  // The share of network.yml probe_rtt's duration a probe lasts here (driver/probe_placement.h:
  // a step predicted faster than it ran has its probe shortened alike).
  double probe_duration_scale = 1;
  // The measured iteration (from 1) it is, whose compute faults (--faults) the prediction
  // applies; 0: none, the healthy expectation.
  int iteration = 0;
  // Per rank (empty: the trace's): GPU compute ops' durations measured in the run
  // (Executor::SetComputeDurations), for attribution's prediction with the measured compute.
  std::vector<std::map<NodeId, TimeNs>> compute_ns;
};

// Where the ranks' graphs come from and which ranks run (genie simulate with a synth
// description): `open` builds rank r's graph (default: its trace file); with `fold`, only its
// representatives run and every other rank's summary is its representative's, renamed.
struct SimulateInput {
  std::function<Result<std::unique_ptr<workload::RankGraph>>(int rank)> open;
  const sim::RankFold* fold = nullptr;
  // Called about every `progress_every` events (from the simulation's thread) with the
  // simulated time reached and the events run so far; empty: none.
  std::function<void(TimeNs now, uint64_t events)> progress;
  // Ranks placed on hosts (a jobs file's placement, driver/jobs_prediction.h, or one job's on a
  // testbed with more ranks than hosts, driver/run_results.cc): the network is
  // then the hosts' (one NPU per host), rank r runs on host rank_host[r], and a host's ranks
  // share its links (sim/host_slots.h). Empty: rank r is NPU r. Not with `fold`.
  std::vector<int> rank_host;
  // Connections whose spine is known, by rank (src, dst, channel: a leaf-spine testbed hashing
  // ports, driver/connection_spines.h): put on the ranks' NPUs as network.yml
  // `ecmp_connections`. Empty: none. Not with `fold`.
  std::vector<config::EcmpConnection> connection_spines;
};

// Runs the workload described by `setup` on `network` with the chosen model. Records every op
// into `recorder` (may be null). `measured` (may be null) conditions the simulation on a
// measured iteration. The setup's compute faults apply to the simulated iterations (counted
// from 1), or with `measured` to its iteration's.
Result<SimulationStats> Simulate(const runtime::RunSetup& setup,
                                 const config::NetworkConfig& network, sim::NetworkModelKind model,
                                 record::Recorder* recorder,
                                 const IterationPolicy& iterations = SimulatedIterations(),
                                 const MeasuredIteration* measured = nullptr,
                                 const SimulateInput* input = nullptr);

}  // namespace genie::driver
