// Attribution's evidence from the measurement alone: what one iteration's recorded ops say about
// each rank's compute (how long its GPU compute really covered, and how late it began) and
// about where the ranks waited for each other (a collective whose last rank to issue kept the
// others waiting in it). Nothing here reads a fault schedule: an injected straggler and a noisy
// host show the same way, as compute ops that took longer than the trace asked. Pure; any
// thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

// One rank's GPU compute in one iteration, measured (the run) against expected (the trace's
// durations, as the healthy prediction ran them).
struct RankCompute {
  int rank = 0;
  TimeNs measured_ns = 0;  // the union of its GPU compute ops' spans in the run
  TimeNs trace_ns = 0;     // the same in the healthy prediction
  // How long after the rank's iteration start its first op began in the run (a stall: a
  // checkpoint, a collector, a descheduled process), beyond the same in the prediction.
  TimeNs late_start_ns = 0;
  // How long its thread waited for a core in the iteration (RankSummary::cpu_wait_ns; 0 where
  // not recorded): a CPU-starved rank wakes late from its sleeps and reads its sockets late.
  TimeNs cpu_wait_ns = 0;
  TimeNs excess_ns() const { return measured_ns - trace_ns + late_start_ns; }
};

// A collective the others waited in for a late rank: the same collective on every rank of its
// group (matched as the runtime matches them: by position in node id order among each rank's
// collectives of the group), whose last rank to issue was `late_rank`.
struct Wait {
  int late_rank = -1;
  int iteration = 0;
  std::string type;  // "all_reduce"
  NodeId node = 0;   // on the late rank
  std::string name;
  int64_t group = kWorldGroup;
  std::vector<int> waiting;  // the ranks that had issued it before, ascending
  TimeNs wait_ns = 0;        // from the first of them issuing to the late rank issuing
};

// Per rank, the union of the spans of its GPU compute ops (not CPU ops) among `ops`; ranks
// without one are absent.
std::map<int, TimeNs> ComputeUnion(const std::vector<const record::OpEvent*>& ops);

// Per rank, each GPU compute op's part of that union: ops by start, each op's span less what
// the ops before it already covered. An op noticed late ends when noticed and the ops queued
// behind it start when it was due (runtime/executor.cc), so spans overlap; these parts do not,
// and a simulation given them as durations (driver/attribution_inputs.h) reproduces the
// rank's measured compute without counting the overlap twice.
std::map<int, std::map<NodeId, TimeNs>> EffectiveComputeDurations(
    const std::vector<const record::OpEvent*>& ops);

// Per rank of `summaries` (one iteration's), how long after its start its first op in `ops`
// began (0 when it has none).
std::map<int, TimeNs> FirstOpDelays(const std::vector<const record::OpEvent*>& ops,
                                    const std::vector<const record::RankSummary*>& summaries);

// Per late rank, the collective of `ops` (one iteration's) the others waited in longest for it.
std::map<int, Wait> CollectiveWaits(const std::vector<const record::OpEvent*>& ops);

}  // namespace genie::report
