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

#include <vector>

#include "genie/driver/bench_plan.h"
#include "genie/launch/rank_env.h"

namespace genie::driver {

// `genie bench`: finds the rank from the launcher's environment, or starts --ranks ranks here.
int Bench(const BenchOptions& options);
// One rank of the job, `env` saying which.
int BenchRank(const BenchOptions& options, const launch::RankEnv& env);

// Before any rank sends: -c's buffers for `ranks_here` (the ranks on this machine, which hold
// theirs at once) fit in the memory this machine has (InvalidArgument naming the size, the
// need, the limit and its source), and --json / --report pass the output rule
// (record/output_guard.h).
Status CheckBenchFits(const BenchOptions& options, const BenchPlan& plan, int ranks,
                      const std::vector<int>& ranks_here);

}  // namespace genie::driver
