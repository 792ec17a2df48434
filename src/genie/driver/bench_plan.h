// What `genie bench`'s flags resolve to before any rank joins: nccl-tests' sweep of sizes, the
// datatype, the planner's options for the one collective, and the checks that decide the exit
// code (JudgeBench). Pure functions of the flags and the world size; errors name the flag.
// Threading: any.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "genie/collective/planner.h"
#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"
#include "genie/report/bench_table.h"

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
  std::string report_path;       // --report: the HTML page of the sweep (rank 0; report/html/)
  double min_busbw = -1;         // GB/s; the footer's "Avg bus bandwidth" must reach it
  std::string expect;            // a link rate (400mbit): the largest size's busbw must reach ...
  double expect_fraction = 0.8;  // ... this fraction of it
  int ranks = 0;                 // with no launcher: start this many ranks here
  // The job, as for `genie run`.
  std::string bind = "127.0.0.1";
  std::string rendezvous;
  std::string job_id;
  std::string tcp_congestion;
  real_backend::TransportChoice transport;  // --transport, --fabric-*
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
// The collective of the sweep's size `index`, as every rank of `ranks` runs it.
collective::CollectiveSpec BenchSpec(const BenchPlan& plan, size_t index, int ranks);
// -c: the memory `rank`'s data check of the sweep's largest checked size takes (its data and
// receive buffers, as runtime::ReserveVerifyData counts them); 0 when nothing is checked.
Result<Bytes> BenchCheckBytes(const BenchPlan& plan, int ranks, int rank);

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

}  // namespace genie::driver
