// The ops furthest behind the model: each communication op of a measured iteration beside the
// same op in that iteration's own prediction (the model started with the iteration's measured
// start skew, idle time and issue order, driver/run_results.cc), ranked by how much longer it
// took than predicted (from the last of its ranks' issue). It answers "which collective made this
// step late" where the per-type busbw only says "the all-reduces, on average". Pure; any thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/op_event.h"

namespace genie::report {

// One op of one iteration: a collective on the ranks of its group (matched as the runtime
// matches them, by position among each rank's collectives of the group), or a send or recv on
// its rank; named by its node on the lowest of them. Times are offsets from the iteration's
// start (its first rank's start) in the run and in the model. The op's own time runs from its
// last rank's issue to its last rank's end: time spent waiting for a late peer to issue is the
// peer's lateness, not this op's, so `added_ns` says where lateness arose and `late_ns` how
// much had built up by the op's end.
struct OpBehind {
  int iteration = 0;
  NodeId node = 0;
  std::string name;
  std::string type;  // collective type ("all_reduce"), or "send" / "recv"
  Bytes size = 0;
  int64_t group = kWorldGroup;
  std::vector<int> ranks;                             // ascending
  TimeNs measured_issue_ns = 0, measured_end_ns = 0;  // the last rank's issue and end
  TimeNs expected_issue_ns = 0, expected_end_ns = 0;  // the model's

  TimeNs measured_ns() const { return std::max<TimeNs>(0, measured_end_ns - measured_issue_ns); }
  TimeNs expected_ns() const { return std::max<TimeNs>(0, expected_end_ns - expected_issue_ns); }
  TimeNs added_ns() const { return measured_ns() - expected_ns(); }     // ranks the list
  TimeNs late_ns() const { return measured_end_ns - expected_end_ns; }  // < 0: sooner
  double ratio() const {
    return expected_ns() > 0
               ? static_cast<double>(measured_ns()) / static_cast<double>(expected_ns())
               : 0.0;
  }
};

// The `keep` ops of one iteration that added the most time beyond their prediction, most first.
// `measured`: the run's comm ops of the iteration, by pointer (a long run's ops are many; its
// wall clock; other ops are ignored),
// `measured_start`: the iteration's first rank start on that clock; `expected`: the simulated
// ops of the iteration's prediction (virtual time from 0), matched by rank and node id. Ops
// missing from either side are left out.
std::vector<OpBehind> OpsBehind(const std::vector<const record::OpEvent*>& measured,
                                TimeNs measured_start, const std::vector<record::OpEvent>& expected,
                                size_t keep);

// The `keep` furthest behind over several iterations' lists, most first.
std::vector<OpBehind> FurthestBehind(const std::vector<std::vector<OpBehind>>& lists, size_t keep);

// "# the ops furthest behind ..." header and one line per op; "" when `ops` is empty.
std::string FormatOpsBehind(const std::vector<OpBehind>& ops);

nlohmann::json ToJson(const OpBehind& op);
OpBehind OpBehindFromJson(const nlohmann::json& j);  // missing keys read as defaults

}  // namespace genie::report
