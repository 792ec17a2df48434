// JobsSpec: several jobs sharing one network, as a jobs file describes them (docs/jobs.md) —
// what `genie launch --jobs FILE` starts and what a prediction of "all jobs together" simulates.
// Each job has a name, a kind (a genie workload: `run`, `bench` or any subcommand's `args`; or
// built-in background `traffic` between host pairs), ranks, a placement on the testbed's hosts,
// a start offset and its own output folder.
//
// Two steps, so that a reader that has no testbed at hand can still check a file:
//   LoadJobsSpec / ParseJobsSpec  the file alone: keys, types, names, values, outputs, ports;
//                                 relative input paths resolved against the file's folder;
//                                 LoadJobsSpec also finds each run job's workload and takes
//                                 its ranks from it (or checks they agree).
//   PlaceJobs                     given the testbed's hosts: every rank's host and NIC, every
//                                 traffic pair's hosts; refuses what does not fit.
// Placement (`slots_per_host` S, default ⌈ranks of all workload jobs / hosts⌉), in file order:
//   interleaved (default)  rank i goes to the next host, round-robin from h0, that has a free
//                          slot: one job alone is rank i on host i mod H, as `genie launch
//                          --testbed` has always placed it;
//   packed                 rank i goes to the first host with a free slot (hosts filled in order);
//   [h2, h5, ...]          rank i on the i-th listed host, cyclically (slots counted, not limited).
// A rank's NIC is its slot on the host (how many ranks were placed there before it) mod NICs.
// Traffic jobs take no slot: rank 2p sends to rank 2p+1 over pair p's hosts, on NIC 0.
//
// Plain data; pure functions (no testbed, no processes). Any thread.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::driver {

// Every rank of a job launched from a jobs file finds, in its environment, the file (absolute
// path) and its job's name: a job's `--predict` reads its neighbours from them.
inline constexpr const char* kJobsFileEnv = "GENIE_JOBS";
inline constexpr const char* kJobNameEnv = "GENIE_JOB_NAME";
// The jobs the launcher started together (comma-separated): a job run alone (--job) names
// only itself, so its prediction has no neighbours.
inline constexpr const char* kJobsStartedEnv = "GENIE_JOBS_STARTED";
// The launch's output folder (absolute; the file's `output:` or the launcher's --output), so a
// job finds its neighbours' folders (their rank streams say when they started).
inline constexpr const char* kJobsOutputEnv = "GENIE_JOBS_OUTPUT";

enum class JobType { kWorkload, kTraffic };
enum class PlacementKind { kInterleaved, kPacked, kListed };

struct Placement {
  PlacementKind kind = PlacementKind::kInterleaved;
  std::vector<std::string> hosts;  // kListed: host names as written (h0, 3)
};

// The built-in background traffic: `parallel` TCP connections per pair, sender -> receiver.
struct TrafficSpec {
  std::vector<std::pair<std::string, std::string>> pair_names;  // as written: [h0, h4]
  std::vector<std::pair<int, int>> pairs;  // host indices (PlaceJobs)
  uint64_t rate_bps = 0;                   // per pair; 0: as fast as TCP goes
  Bytes bytes = 0;                         // per pair; 0: no limit
  int parallel = 1;
  TimeNs duration_ns = 0;  // 0: until `bytes`, or until every workload job has ended
  TimeNs on_ns = 0;        // on/off periods (both or neither): send on_ns, pause off_ns, ...
  TimeNs off_ns = 0;
};

struct JobSpec {
  std::string name;
  JobType type = JobType::kWorkload;
  // The genie subcommand and its arguments, as `genie launch -- ...` takes them ("run",
  // "--workload", "/abs/path", "--iterations", "5", ...), without the output flags, which
  // JobCommand() adds. Traffic: "traffic" and its flags.
  std::vector<std::string> genie_args;
  std::string subcommand;  // genie_args[0]
  // The structured keys as written under `run:` / `bench:` (input paths made absolute), e.g.
  // options["workload"], options["collective"]; empty for `args:` and traffic jobs.
  std::map<std::string, std::string> options;
  std::string workload;    // run jobs: the workload path (absolute), else ""
  int iterations = 0;      // 0: the subcommand's default
  int ranks = 0;  // 0 only from ParseJobsSpec for a run job that left it to its workload
  Placement placement;
  TimeNs start_ns = 0;     // after the launch starts
  std::string output;      // the job's folder (<output>/<name> unless the job names one)
  bool output_given = false;
  int port = 0;            // rendezvous port asked for; 0: the launcher picks one
  TrafficSpec traffic;     // type kTraffic only
  // PlaceJobs: by rank, the host index and NIC index it runs on.
  std::vector<int> rank_host;
  std::vector<int> rank_nic;
};

struct JobsSpec {
  std::string path;  // the file, absolute
  std::string testbed;  // the file's `testbed:` ("" when not given)
  std::string output;   // base folder: the file's `output:`, else "<file stem>-out"
  int slots_per_host = 0;  // 0: derived (PlaceJobs fills it in)
  bool stop_all_on_failure = false;
  std::vector<JobSpec> jobs;
  std::vector<std::string> hosts;  // PlaceJobs: the testbed's host names, by index

  const JobSpec* Find(const std::string& name) const;
  bool HasWorkload() const;  // any job that is not traffic
};

// Parses the text of a jobs file; `path` names it in errors and anchors relative input paths
// (`workload`, `network`, `faults`, ...). Errors name the file, the job and the key.
Result<JobsSpec> ParseJobsSpec(const std::string& text, const std::string& path);
// Reads and parses `path`, and finds every run job's workload: `ranks` left out is the
// workload's rank count; given, it must be that count.
Result<JobsSpec> LoadJobsSpec(const std::string& path);

// Sets the base output folder (a flag overriding the file's) and every job's folder that the
// job does not name itself; refuses two jobs in one folder (or one inside the other's).
Status SetJobsOutput(const std::string& base, JobsSpec* spec);

// Resolves placements on a testbed of `hosts` (names, by index; "h3" and "3" both name host 3)
// with `nics_per_host` NICs each. Refuses jobs that do not fit, unknown hosts, traffic pairs
// naming a host the testbed lacks; the error names the file and the job.
Status PlaceJobs(const std::vector<std::string>& hosts, int nics_per_host, JobsSpec* spec);

// The job's full command after `genie`: genie_args plus its output flags (run: --output DIR,
// bench: --json DIR/bench.json, traffic: --output DIR) unless the args give them already.
std::vector<std::string> JobCommand(const JobSpec& job);
// The file the job's results land in (run: results.json, bench: bench.json, traffic:
// traffic.json; other subcommands: the folder itself).
std::string JobResultsPath(const JobSpec& job);

// `genie launch --testbed NAME` alone: `ranks` ranks of one interleaved job on `hosts` hosts,
// as PlaceJobs places them (rank i on host i mod H, NIC (i / H) mod NICs).
void PlaceSingleJob(int ranks, int hosts, int nics_per_host, std::vector<int>* rank_host,
                    std::vector<int>* rank_nic);

}  // namespace genie::driver
