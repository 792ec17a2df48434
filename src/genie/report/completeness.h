// Completeness: whether a run's records are all there — every rank the run was started with,
// every iteration it was asked for (warm-ups included). A run that was killed or interrupted,
// an output folder that lacks a rank's stream, or a stream cut mid-record gives figures over
// part of the run only; `genie results show`, `genie results merge` and the results JSON
// ("completeness") say so, and say which ranks and iterations are missing, instead of passing
// the part off as the whole.
//
// What was expected comes from the run's headers ("world_size", "iterations", "warmup", as
// `genie run` writes them; a merged run's "headers"; "configs.workload.ranks" otherwise). When
// no header says, the ranks 0..highest seen and the iterations lowest..highest seen are
// expected. An iteration counts as finished on a rank when the rank's "rank" record for it is
// there. Pure; any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

// Inclusive [first, last] intervals, ascending and disjoint: a run killed in iteration 10 of a
// million misses one interval per rank, not a million numbers.
using Ranges = std::vector<std::pair<int, int>>;

struct Completeness {
  int world_size = 0;             // ranks expected
  bool world_size_known = false;  // from a header, not guessed from the records
  int first_iteration = 0;        // iterations expected, inclusive (warm-ups are negative)
  int last_iteration = -1;        // < first_iteration: none expected (no header, no records)
  bool iterations_known = false;
  Ranges missing_ranks;              // expected ranks with no record at all
  std::map<int, Ranges> unfinished;  // rank -> expected iterations without its rank record
                                     // (ranks that have some records)
  bool truncated = false;            // a stream's last record was cut off

  bool complete() const { return missing_ranks.empty() && unfinished.empty() && !truncated; }
};

// run_info: a stream's header, a merged run's {"headers": [...], "truncated_files": [...]}, or
// a results JSON's provenance. `truncated`: a stream read for these records was cut.
Completeness CheckCompleteness(const nlohmann::json& run_info,
                               const std::vector<record::OpEvent>& ops,
                               const std::vector<record::RankSummary>& ranks, bool truncated);

// For people: "# INCOMPLETE ..." lines naming the missing ranks and unfinished iterations
// (ranks grouped by what they miss, numbers as ranges "2-5,7"); "" when complete.
std::string DescribeCompleteness(const Completeness& c);

// For the results JSON: {"complete", "world_size", "iterations": {"first", "last"},
// "missing_ranks": [[first, last], ...], "unfinished_iterations": {"rank": [[first, last], ...]},
// "truncated"}.
nlohmann::json CompletenessJson(const Completeness& c);

// "0-3,7,9-10".
std::string FormatRanges(const Ranges& ranges);

}  // namespace genie::report
