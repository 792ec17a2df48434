// BenchTable: what `genie bench` prints and writes — nccl-tests' table (size, count, type,
// redop, root, time, algbw, busbw, #wrong, footer "Avg bus bandwidth") plus genie's jitter
// columns (min / p99 / max time of one iteration), and the same rows as JSON. It also turns the
// ranks' raw timings of one size into a row (MakeBenchRow), so the figures, the table and the
// JSON cannot disagree. docs/bench.md reads the output column by column.
//
// Figures follow nccl-tests (report/bandwidth.h): time = one collective's time averaged over
// the timed iterations (each rank's mean, then combined across ranks as -a says), algbw =
// size / time, busbw = algbw x the collective's factor. Pure functions and value types; any
// thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/workload/op.h"

namespace genie::report {

// nccl-tests' -a: how each rank's mean time becomes the row's time.
enum class BenchAverage : int { kRank0 = 0, kMean = 1, kMin = 2, kMax = 3 };

// What the whole run is: printed in the header and stored in the JSON.
struct BenchInfo {
  CollectiveType type = CollectiveType::kAllReduce;
  std::string algorithm = "ring";
  int ranks = 0;
  std::string datatype = "float";
  int type_size = 4;
  std::string op = "sum";
  int root = 0;
  Bytes min_bytes = 0;
  Bytes max_bytes = 0;
  int step_factor = 1;  // > 1: sizes multiply; else they grow by step_bytes
  Bytes step_bytes = 0;
  int warmup = 0;
  int iters = 0;
  bool check = false;
  BenchAverage average = BenchAverage::kMean;
  int channels = 1;
  int chunks = 1;
  std::string testbed;  // the `genie testbed` the ranks run on, if any
};

// One size's row.
struct BenchRow {
  Bytes size = 0;      // nccl-tests' size: the whole buffer (all-gather's output, ...)
  uint64_t count = 0;  // elements per call as nccl-tests counts them (per rank for the
                       // all-gather/reduce-scatter/all-to-all/gather/scatter families)
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  int64_t wrong = -1;  // wrong elements summed over ranks; -1 = not checked (-c 0, or a size
                       // that is not whole 4-byte elements)
  // Jitter: one iteration's time, as the slowest rank saw it, over the timed iterations.
  double min_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

// True for the collectives whose call takes one rank's share of nccl-tests' size (all-gather,
// reduce-scatter, all-to-all, gather, scatter): their count is per rank.
bool BenchCountsPerRank(CollectiveType type);
// nccl-tests' count for a size: size / type size, divided by n for the collectives whose call
// takes one rank's share (all-gather, reduce-scatter, all-to-all, gather, scatter).
uint64_t BenchCount(CollectiveType type, Bytes size, int type_size, int n);
// nccl-tests' "redop" and "root" columns: "sum"/"none"; the root or -1.
std::string BenchRedop(CollectiveType type, const std::string& op);
int BenchRoot(CollectiveType type, int root);

// A row from raw timings: rank_us[r] = rank r's time of one collective (its timed loop over
// the iterations), per_iteration[r][i] = rank r's time of timed iteration i (µs). `wrong` as in
// BenchRow. The row's time combines the ranks' times as `average` says; the jitter takes per
// iteration the slowest rank's time.
BenchRow MakeBenchRow(const BenchInfo& info, Bytes size, const std::vector<double>& rank_us,
                      const std::vector<std::vector<double>>& per_iteration, int64_t wrong);

// The table, in pieces so that rows print as their sizes finish.
std::string BenchHeaderText(const BenchInfo& info);
std::string BenchRowText(const BenchInfo& info, const BenchRow& row);
// "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth    : X".
std::string BenchFooterText(const BenchInfo& info, const std::vector<BenchRow>& rows);

// nccl-tests' footer figure: the mean of the rows' busbw (GB/s); 0 without rows.
double AvgBusBw(const std::vector<BenchRow>& rows);
// Wrong elements over all checked rows; -1 when nothing was checked.
int64_t TotalWrong(const std::vector<BenchRow>& rows);

// {"info": {...}, "rows": [...], "avg_busbw_gbps": X, "wrong": N, "verdict": {...}}; `verdict`
// is what the pass/fail checks said (null when none were asked for).
nlohmann::json BenchJson(const BenchInfo& info, const std::vector<BenchRow>& rows,
                         const nlohmann::json& verdict);

}  // namespace genie::report
