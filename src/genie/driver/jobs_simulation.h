// Jobs simulation: several jobs on one simulated network (issue 43, "interference predicted").
// Each workload job keeps its own graphs, executors, communicator groups and rank numbers; its
// ranks sit on the network's hosts as its placement says, and it starts at its offset. A
// background traffic job is bulk flows between pairs of hosts over a window. All of them share
// one event queue and one network model, so where they cross the same links (a host's links,
// shared by every rank on it; a leaf's uplinks) the flow model shares them max-min fairly:
// "alone" and "together" are two simulations of the same descriptions.
//
// The network given is one NPU per host (a testbed's description with one rank per host, or a
// network.yml whose NPUs are the hosts); ranks of several jobs on one host become slots of it
// (sim/host_slots.h). Each job's ranks reach the shared SimBackend through a view that
// renames its ranks to their NPUs and keeps its collectives' flow ids apart from the other
// jobs' (the flow model paces a chunk's messages together by that id).
//
// Owns every job's graphs and drivers for the duration of SimulateJobs(). Main thread only.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/config/network_config.h"
#include "genie/driver/iteration_driver.h"
#include "genie/record/rank_summary.h"
#include "genie/runtime/run_setup.h"
#include "genie/sim/network_model.h"

namespace genie::driver {

// One connection of a traffic job: messages of kTrafficMessageBytes from host `src_host` to
// host `dst_host` from `start_ns` (after the job's start): back to back (two queued on the
// connection, as a bulk sender keeps its socket full) when `bytes_per_ns` is 0, else one every
// kTrafficMessageBytes / bytes_per_ns ns (a paced sender); until `duration_ns` has passed, or
// `bytes` are sent, or (neither given) every workload job has ended; with `on_ns` and `off_ns`,
// only in the on periods (from the start: on, off, on, ...).
inline constexpr Bytes kTrafficMessageBytes = 256 << 10;  // a bulk sender's write
struct TrafficFlow {
  int src_host = 0;
  int dst_host = 0;
  double bytes_per_ns = 0;
  Bytes bytes = 0;
  TimeNs start_ns = 0;
  TimeNs duration_ns = 0;
  TimeNs on_ns = 0;
  TimeNs off_ns = 0;
};

// A job as the simulation takes it: plain inputs, whatever file described them.
struct SimJob {
  std::string name;
  // A workload job: its resolved setup (graphs, groups, executor config; its network is not
  // read). Null: a traffic job.
  const runtime::RunSetup* setup = nullptr;
  std::vector<int> rank_host;  // the host (NPU of the hosts' network) of each rank
  TimeNs start_ns = 0;         // when its ranks start (all at once)
  IterationPolicy iterations = IterationPolicy{0, 1, false, false};
  std::vector<TrafficFlow> traffic;  // a traffic job's flows
  // A workload job's connections whose spine is known, by its ranks (driver/connection_spines.h):
  // put on the NPUs its ranks take. Empty: split over the spines.
  std::vector<config::EcmpConnection> connection_spines;
};

struct SimJobResult {
  std::string name;
  std::vector<record::RankSummary> ranks;  // per iteration (warm-ups < 0), then rank
  std::vector<TimeNs> step_ns;             // per measured iteration, from its first start
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;          // when its last rank (a traffic job: its last message) finished
  uint64_t messages = 0;      // a traffic job's messages delivered
  Bytes bytes = 0;            // and their bytes
  TimeNs MedianStep() const;  // of step_ns (0: none)
};

struct JobsSimulation {
  std::vector<SimJobResult> jobs;  // in the order given
  int slots = 1;                   // most ranks (and traffic endpoints) on one host
  TimeNs end_ns = 0;
  uint64_t events = 0;
};

// Simulates `jobs` together on `hosts` (one NPU per host) with `model`. Errors name the job:
// a rank on a host the network lacks, a workload that deadlocks.
Result<JobsSimulation> SimulateJobs(const std::vector<SimJob>& jobs,
                                    const config::NetworkConfig& hosts,
                                    sim::NetworkModelKind model);

}  // namespace genie::driver
