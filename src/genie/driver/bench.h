// The driver behind `genie bench`: nccl-tests for genie. Each rank process (started by genie
// launch, mpiexec, srun or torchrun, found the way `genie run` finds it) joins the job on the
// real backend and, for every size of the sweep, plans the one collective with the planner
// (collective::Plan) and runs it with the CollectiveRunner that `genie run`'s Executor uses:
//   barrier -> warm-up iterations -> timed iterations, back to back with no barrier between
//   them (each rank times each of its iterations) -> with -c, one more iteration carrying real
//   data, checked element by element (runtime/verify_data.h) -> every rank sends its timings
//   and wrong-element count to rank 0, which prints the size's row (report/bench_table.h).
// After the last size rank 0 prints the footer, writes --json, decides the verdict
// (--min-busbw, --expect, #wrong) and sends it to every rank, so every rank exits with it.
//
// The timed iterations carry no payload (the wire carries filler, as in `genie run` without
// --verify), so the figures are the network's, comparable with `genie run`'s busbw.
//
// Exit codes (docs/cli.md): 0 every check passed, 1 a check failed (busbw below --min-busbw or
// --expect, or #wrong > 0) or the network failed, 2 bad input, 75 another rank failed.
// Threading: the process's main thread (the rank's event loop runs on it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/common/status.h"
#include "genie/launch/rank_env.h"
#include "genie/report/bench_table.h"
#include "genie/runtime/real_backend.h"

namespace genie::driver {

struct BenchOptions {
  // nccl-tests' flags.
  std::string collective = "all_reduce";
  std::string min_bytes = "32M";   // -b
  std::string max_bytes = "32M";   // -e
  int step_factor = 1;             // -f (> 1: multiply)
  std::string step_bytes = "1M";   // -i (when -f is 1: add)
  int iters = 20;                  // -n
  int warmup = 1;                  // -w
  int check = 1;                   // -c
  int average = 1;                 // -a: 0 rank 0, 1 mean, 2 min, 3 max
  std::string op = "sum";          // -o
  std::string datatype = "float";  // -d
  int root = 0;                    // -r
  // genie's.
  std::string algorithm = "ring";
  int chunks = 1;
  int channels = 1;
  std::string slice;     // largest message on the wire
  std::string topology;  // logical dims, e.g. 2x2
  std::string json_path;
  std::string report_path;  // --report: the HTML page of the sweep (rank 0; report/html/)
  double min_busbw = -1;         // GB/s; the footer's "Avg bus bandwidth" must reach it
  std::string expect;            // a link rate (400mbit): the largest size's busbw must reach ...
  double expect_fraction = 0.8;  // ... this fraction of it
  int ranks = 0;                 // with no launcher: start this many ranks here
  // The job, as for `genie run`.
  std::string bind = "127.0.0.1";
  std::string rendezvous;
  std::string job_id;
  std::string tcp_congestion;
  runtime::TransportChoice transport;  // --transport, --fabric-*
  std::string peer_timeout = "30s";
  std::string testbed;
  std::vector<std::string> argv;
};

// nccl-tests' -d names (and a few aliases) with their element size.
struct BenchDatatype {
  std::string name;
  int size = 0;
};
std::optional<BenchDatatype> ParseBenchDatatype(const std::string& text);

// Everything the options resolve to for a job of `ranks` ranks; pure, errors name the flag.
struct BenchPlan {
  report::BenchInfo info;
  std::vector<Bytes> sizes;  // nccl-tests' sizes, aligned (see SweepSizes)
  collective::PlanOptions plan;
  double min_busbw = -1;    // GB/s, < 0: not checked
  double expect_gbps = -1;  // --expect as GB/s, < 0: not checked
  double expect_fraction = 0.8;
};
Result<BenchPlan> ResolveBench(const BenchOptions& options, int ranks);

// nccl-tests' sweep: from min to max, times `factor` when it is > 1, else plus `step`. Every
// size is rounded down to a multiple of `unit` (at least one unit) and repeated sizes are
// dropped. `unit` = type size, times the ranks for collectives whose call takes one rank's share.
std::vector<Bytes> SweepSizes(Bytes min, Bytes max, int factor, Bytes step, Bytes unit);
// The smallest size step of a collective: see SweepSizes.
Bytes SizeUnit(CollectiveType type, int type_size, int ranks);
// nccl-tests' size (the whole buffer) as the planner's Chakra comm_size (report/bandwidth.h):
// one rank's input for all-gather and gather, the size itself otherwise.
Bytes CommSize(CollectiveType type, Bytes size, int ranks);

// The verdict of a finished sweep: exit code 0 or 1 and one line per failed check.
struct BenchVerdict {
  int exit_code = 0;
  std::vector<std::string> failures;
  nlohmann::json ToJson(const BenchPlan& plan) const;
};
BenchVerdict JudgeBench(const BenchPlan& plan, const std::vector<report::BenchRow>& rows);

// `genie bench`: finds the rank from the launcher's environment, or starts --ranks ranks here.
int Bench(const BenchOptions& options);
// One rank of the job, `env` saying which.
int BenchRank(const BenchOptions& options, const launch::RankEnv& env);

}  // namespace genie::driver
