// Statistics over a run's records, shared by the results JSON, the human summary and the
// ASTRA-sim lines so that all three always agree. Only measured iterations (iteration >= 0)
// count; warm-ups (negative iterations) are recorded but left out. Pure; any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

// One rank over all measured iterations: elapsed = the sum of each iteration's finish - start
// (the time between iterations, spent in genie's barriers, is not the workload's), compute and
// comm summed, exposed = elapsed - compute (ASTRA-sim's definition) - stalls (compute faults).
// For one iteration starting at 0, as in simulation, elapsed is the rank's finish time:
// ASTRA-sim's "finished, T cycles".
// span = first start to last finish.
struct RankTotals {
  int rank = 0;
  int iterations = 0;
  TimeNs start = 0;
  TimeNs finish = 0;
  TimeNs compute_ns = 0;
  TimeNs comm_ns = 0;
  TimeNs elapsed_ns = 0;
  TimeNs exposed_comm_ns = 0;
  TimeNs compute_excess_ns = 0;  // compute faults: RankSummary's, summed
  TimeNs stall_ns = 0;
  TimeNs span() const { return finish - start; }
};
// Sorted by rank.
std::vector<RankTotals> TotalsPerRank(const std::vector<record::RankSummary>& ranks);

// One iteration across ranks: step time = last rank's finish - first rank's start.
struct IterationStep {
  int iteration = 0;
  TimeNs start = 0;
  TimeNs finish = 0;
  TimeNs step_ns() const { return finish - start; }
};
// Sorted by iteration; the warm-ups (negative iterations) only when asked.
std::vector<IterationStep> StepTimes(const std::vector<record::RankSummary>& ranks,
                                     bool with_warmups = false);

// min / median / max; the median of an even count is the mean of the middle two (rounded down).
struct Spread {
  TimeNs min = 0;
  TimeNs median = 0;
  TimeNs max = 0;
};
Spread SpreadOf(std::vector<TimeNs> values);

// One row per communication type ("all_reduce", ..., "send", "recv"), each rank's execution of
// an op counted once. algbw = ΣS / Σt and busbw = Σ(S·factor) / Σt over the row's ops, i.e. the
// time-weighted figures (equal to nccl-tests' for a row of identical ops).
struct TypeRow {
  std::string type;
  int64_t count = 0;
  Bytes bytes = 0;          // Σ comm_size
  TimeNs total_ns = 0;      // Σ op duration
  double mean_ns = 0;       // total_ns / count
  double algbw_gbps = 0;
  double busbw_gbps = 0;

  // Whether the row's busbw is a transfer's. Not a send's: a real send is done once the socket
  // buffer holds it (GB/s on any link), a simulated one once it has arrived; its recv times the
  // transfer. Averages and measured-beside-predicted leave such rows out.
  bool times_a_transfer() const { return type != "send"; }
};
// Rows in collective-type order, then send, recv.
std::vector<TypeRow> CollectiveTypeTable(const std::vector<record::OpEvent>& ops);
// The same, one op at a time (a streamed output sees each op once): Add in the ops' order gives
// exactly CollectiveTypeTable's rows.
class TypeTableAccumulator {
 public:
  void Add(const record::OpEvent& e);
  std::vector<TypeRow> Rows() const;

 private:
  struct Acc {
    TypeRow row;
    double s = 0;
    double bus_s = 0;
  };
  std::map<int, Acc> rows_;  // collectives by Chakra number, then send (100), recv (101)
};

// "all_reduce" for collectives, "send"/"recv" for point-to-point, "" otherwise.
std::string CommTypeName(const record::OpEvent& event);

}  // namespace genie::report
