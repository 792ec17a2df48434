// Jobs launch: `genie launch --jobs FILE` — every job of a jobs file (jobs_spec.h) started on
// one testbed (or, with none named, on this machine's loopback), each at its start offset, each
// with its own job id, rendezvous (port), output folder and log, none stopping the others when
// it fails unless the file says stop_all_on_failure.
//
// One process per job supervises its ranks: the launcher starts `genie launch --jobs FILE --job
// NAME ...` for each, which places the job's ranks and runs them with the single-job launcher
// (launch/local_launcher.h: a failing rank stops its own job's ranks; its guardian stops them
// should that process die). So a job is the same thing launched alone (`--job NAME`) or among
// the others, and one job's failure is contained in its own supervisor. The launcher forwards
// SIGINT/SIGTERM to the supervisors, each of which asks for SIGTERM should the launcher die
// (PR_SET_PDEATHSIG): nothing outlives it. Open-ended traffic jobs (no duration, no bytes) are
// stopped once every workload job has ended.
// At the end it prints one line per job (job, kind, ranks, hosts, start, time, exit, results)
// and writes <output>/jobs.json: each job's hosts by rank, wall-clock start and end, exit and
// results path, for the analysis that joins the jobs.
//
// Exit code: 0 every job succeeded; 2 bad input (nothing started); 128+N interrupted by signal
// N; otherwise the exit code of the first job (in file order) that failed.
// Main thread of a single-threaded process (it owns a ProcessGroup: env/process.h).
#pragma once

#include <string>

#include "genie/common/units.h"
#include "genie/env/env.h"

namespace genie::driver {

struct JobsLaunchOptions {
  std::string jobs_path;
  std::string testbed;  // overrides the file's `testbed:`; both empty: loopback, no namespaces
  std::string output;   // overrides the file's `output:`
  TimeNs grace = 5 * kNsPerSec;
  // One job only (`--job NAME`), as the launcher starts it or as a user runs a job alone:
  std::string only_job;
  std::string rendezvous;  // default: rank 0's host address and the job's port (testbed)
  std::string job_id;      // default: "<job>-<random>"
  std::string log;         // redirect this process's stdout and stderr there (the launcher's)
};

// All jobs; `env` nullptr: the real one.
int LaunchJobs(const JobsLaunchOptions& options, env::Env* env = nullptr);
// options.only_job alone.
int LaunchOneJob(const JobsLaunchOptions& options);

}  // namespace genie::driver
