// Jobs prediction: a jobs file (driver/jobs_spec.h) made into the plain inputs of a jobs
// simulation (driver/jobs_simulation.h), and each job's step predicted together with its
// neighbours and alone: the interference a neighbour costs, before it is measured. Used by
// `genie simulate --jobs` (the table and its JSON) and by a job's `genie run --predict` when
// `genie launch --jobs` started it (GENIE_JOBS, GENIE_JOB_NAME: the prediction then includes its
// neighbours and records the job alone as well; docs/prediction.md, "Neighbours").
//
// The network the jobs share has one NPU per host: --network's file, else the jobs file's
// testbed as `genie testbed network-yml` writes it with one rank per host (calibrated when it
// was). Only `run:` jobs are simulated (their workload and flags are known); `bench:` and
// `args:` jobs are named as not modelled.
// Main thread only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/driver/jobs_simulation.h"
#include "genie/driver/jobs_spec.h"
#include "genie/report/prediction.h"

namespace genie::driver {

struct RunOptions;

// The hosts' network of `spec`: `network_path` when given, else its testbed's.
Result<config::NetworkConfig> JobsHostsNetwork(const JobsSpec& spec,
                                               const std::string& network_path);

// Places `spec`'s jobs (PlaceJobs) on the testbed's hosts when it is up, else on `hosts`' NPUs
// (h0 .. hN-1, one NIC each). Refuses a testbed whose host count is not the network's.
Status PlaceOnHosts(const config::NetworkConfig& hosts, JobsSpec* spec);

// The jobs as the simulation takes them; the setups they point at are owned here.
struct JobsModel {
  std::vector<std::unique_ptr<runtime::RunSetup>> setups;
  std::vector<SimJob> jobs;         // workload (run:) and traffic jobs, in the file's order
  std::vector<std::string> skipped;  // "job 'b' (genie bench): not modelled ..."
};
// `own` (may be null): the setup and iteration policy of job `own_name`, used instead of its
// file's flags (a running job's own).
Result<JobsModel> ModelJobs(const JobsSpec& spec, const std::string& own_name = "",
                            const runtime::RunSetup* own = nullptr,
                            const IterationPolicy* own_iterations = nullptr);

// One workload job's figures: per measured iteration, its step with every job of the model
// and with it alone on the network.
struct JobPrediction {
  std::string name;
  std::vector<TimeNs> together_ns;
  std::vector<TimeNs> alone_ns;
  // Per measured iteration, together: the share of it during which another workload job ran
  // an iteration (driver/neighbour_overlap.h).
  std::vector<double> overlap;
  TimeNs together_median = 0;
  TimeNs alone_median = 0;
  TimeNs interference_ns() const { return together_median - alone_median; }
};
// Every workload job's (only `only`'s when not empty).
Result<std::vector<JobPrediction>> PredictJobs(const JobsModel& model,
                                               const config::NetworkConfig& hosts,
                                               sim::NetworkModelKind kind,
                                               const std::string& only = "");

// The first iteration start (warm-ups included) any rank recorded in `folder`'s rank streams
// (rank-N.jsonl, written as the run goes), on this machine's monotonic clock: when a job
// launched by genie launch --jobs really began. Nullopt when none is recorded (yet).
std::optional<TimeNs> RecordedJobStart(const std::string& folder);
// When a traffic job's senders first turned on (the earliest `on_ns` of `folder`'s
// traffic-rank-N.jsonl, wall clock), on this machine's monotonic clock (moved by the offset
// between the two clocks now: its ranks and this process share the machine). Nullopt when none
// is recorded (yet).
std::optional<TimeNs> RecordedTrafficStart(const std::string& folder);
// Starts `model`'s jobs as they really began: every workload job whose folder (in `spec`)
// records its start, and every traffic job whose senders recorded turning on, is moved to
// `own`'s start plus the measured difference from `own`'s (a traffic job's on/off schedule then
// runs from there, as its senders keep it); jobs without a record (a neighbour not yet begun)
// keep the file's offset from
// `own`'s; should one then start before 0, all are shifted so that the earliest starts at 0. The launcher starts jobs a few
// hundred ms apart from the file's offsets on busy cores (their start-up), and two jobs of one
// period started together stay in lockstep in a simulation, sharing every byte, where the real
// ones are out of phase from their first iteration on. Returns how many starts were measured.
int StartAsMeasured(const JobsSpec& spec, const std::string& own, JobsModel* model);

// genie run --predict under genie launch --jobs (GENIE_JOBS, GENIE_JOB_NAME): the hosts'
// network and this job's ranks on it (SimulateInput::rank_host), so that its own prediction
// places its ranks as the launcher did. Nullopt without those variables, or when the jobs
// file cannot be used (said on stderr).
struct PlacedJob {
  config::NetworkConfig hosts;
  std::vector<int> rank_host;
};
std::optional<PlacedJob> PlaceThisJob(const RunOptions& options, const runtime::RunSetup& setup);

// genie run --predict under genie launch --jobs: what its neighbours add.
struct NeighbourPrediction {
  std::string jobs_file;
  std::string job;
  std::vector<std::string> neighbours;  // the other jobs simulated with it
  std::vector<std::string> skipped;
  std::string network;                  // the hosts' network's source
  JobPrediction figures;                // the jobs simulation's, this job's
  std::map<int, TimeNs> alone_of_iteration;  // the expectation before the neighbours
  TimeNs alone_step_ns = 0;
  TimeNs gap_ns = 0;  // between iterations, as measured
  int measured_starts = 0;  // jobs started at their recorded start (StartAsMeasured)
  // Per iteration, the share of it a neighbour's steps covered: in the jobs simulation (by
  // measured iteration number) and as recorded (by iteration; empty: not known).
  std::vector<double> overlap_simulated;
  std::map<int, double> overlap_measured;
  // Per iteration, the time the job's ranks idled alone (beyond the simulation's) that its
  // neighbours' steps filled, taken off its interference.
  std::map<int, TimeNs> filled_of_iteration;
  std::map<std::string, TimeNs> starts;  // each simulated job's start
  // Per job, its connection directions on a known spine (a leaf-spine hashing ports).
  std::map<std::string, size_t> known_spines;
};
// Nullopt when GENIE_JOBS / GENIE_JOB_NAME are not both set (the prediction is left as it is).
// Otherwise simulates the job's jobs file together and alone, and adds to each iteration's
// expected step what the neighbours add to it (driver/neighbour_overlap.h): the jobs
// simulation's together minus alone (past the simulated iterations, the medians'), scaled to
// the share of the measured iteration the neighbours' recorded steps covered where every
// neighbour recorded its steps (else as simulated), less the job's own idle time beyond the
// simulation's that they covered (by the measured share, else the simulated one). The common
// step gets the medians' difference. The measured conditions (start skew, idle time, issue
// order, bbr's probes) stay the job-alone prediction's. A failure is said on stderr and
// leaves `expected` unchanged.
// Every workload job of the jobs simulation idles between its iterations what this job's
// ranks did (`ranks`: the median over its iterations of the time from the last rank's finish
// to the next iteration's first start): the harness's time, in which the neighbours have the
// links to themselves. The jobs simulated are those GENIE_JOBS_STARTED names (comma-separated;
// absent: every job of the file), so a job launched alone (--job) has no neighbours. On a
// leaf-spine hashing ports, each job's connections take the spines their ports hash to, as
// its folder's rank streams recorded them (driver/connection_spines.h; none yet: split).
std::optional<NeighbourPrediction> AddNeighbours(const RunOptions& options,
                                                 const runtime::RunSetup& setup,
                                                 sim::NetworkModelKind kind,
                                                 const std::vector<record::RankSummary>& ranks,
                                                 report::Expectation* expected);
// results.json's prediction: per iteration `expected_alone_step_ns`, and `neighbours` (the
// jobs file, the job, its neighbours, the simulated medians together and alone).
void NeighboursToJson(const NeighbourPrediction& n, nlohmann::json* prediction);
// One line: the neighbours and the step they are predicted to cost.
void PrintNeighbours(std::ostream& out, const NeighbourPrediction& n);

}  // namespace genie::driver
