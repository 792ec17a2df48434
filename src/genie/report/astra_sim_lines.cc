#include "genie/report/astra_sim_lines.h"

#include <fmt/format.h>

#include "genie/report/statistics.h"

namespace genie::report {

void PrintAstraSimLines(std::ostream& out, const std::vector<record::RankSummary>& ranks) {
  for (const RankTotals& t : TotalsPerRank(ranks)) {
    out << fmt::format("sys[{}] finished, {} cycles, exposed communication {} cycles.\n", t.rank,
                       t.elapsed_ns, t.exposed_comm_ns);
  }
}

}  // namespace genie::report
