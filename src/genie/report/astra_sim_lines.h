// ASTRA-sim's per-rank result line, byte for byte, so scripts that grep ASTRA-sim's output read
// genie's too:  "sys[r] finished, T cycles, exposed communication E cycles."
// T = the rank's time inside its measured iterations, summed (its finish time when it starts at
// 0, as in simulation; wall-time ns in real runs) and E = T - GPU compute time. 1 cycle = 1 ns.
// `genie run`, `genie simulate` and `genie results show --astra-sim` all print these lines from
// the same records, so they agree.
// Pure; any thread.
#pragma once

#include <ostream>
#include <vector>

#include "genie/record/rank_summary.h"

namespace genie::report {

// One line per rank, in rank order.
void PrintAstraSimLines(std::ostream& out, const std::vector<record::RankSummary>& ranks);

// At most about `max_lines` lines however many ranks: with more ranks than that, the first and
// last few ranks' lines and those of `interest` (in rank order), then one line saying how many
// were left out and the min / median / max of both figures across all ranks (with the ranks
// that reach min and max). With max_lines or fewer ranks, exactly PrintAstraSimLines.
void PrintAstraSimLinesBounded(std::ostream& out, const std::vector<record::RankSummary>& ranks,
                               size_t max_lines, const std::vector<int>& interest);

}  // namespace genie::report
