// RankSummary: one rank's totals for one iteration, the figures ASTRA-sim prints per rank
// ("sys[r] finished, T cycles, exposed communication E cycles."). Produced by the executor when
// a rank finishes an iteration (SummarizeRank in busy_time.h computes it from OpEvents).
// Plain value type; any thread.
#pragma once

#include "genie/common/units.h"

namespace genie::record {

struct RankSummary {
  int rank = 0;
  int iteration = 0;           // negative = warm-up
  TimeNs start = 0;
  TimeNs finish = 0;
  TimeNs compute_ns = 0;       // total GPU compute time (COMP nodes that are not CPU ops)
  TimeNs comm_ns = 0;          // time with at least one communication op in flight (a union)
  TimeNs exposed_comm_ns = 0;  // finish - start - compute_ns (ASTRA-sim's definition)
};

}  // namespace genie::record
