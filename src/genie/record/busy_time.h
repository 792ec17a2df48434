// Busy time: how long a rank had at least one operation of a class in flight — the union of the
// ops' [start, end) intervals, so that overlapping communication (a RECV running beside a
// collective) is not counted twice. SummarizeRank derives a RankSummary from a rank's OpEvents
// with the same definitions ASTRA-sim uses. Pure functions; any thread.
#pragma once

#include <utility>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::record {

// Total length of the union of half-open intervals [first, second). Empty or inverted
// intervals count nothing. Takes its argument by value because it sorts it.
TimeNs UnionLength(std::vector<std::pair<TimeNs, TimeNs>> intervals);

// The summary of `rank`'s iteration `iteration` from all events given (other ranks' and other
// iterations' events are ignored): compute_ns = sum of GPU compute op durations (COMP, not CPU
// ops: ASTRA-sim's tics_gpu_ops); comm_ns = union of collective/SEND/RECV intervals;
// exposed_comm_ns = finish - start - compute_ns.
RankSummary SummarizeRank(const std::vector<OpEvent>& events, int rank, int iteration,
                          TimeNs start, TimeNs finish);

}  // namespace genie::record
