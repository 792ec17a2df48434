#include "genie/report/astra_sim_lines.h"

#include <fmt/format.h>

#include <algorithm>

#include "genie/report/statistics.h"

namespace genie::report {

void PrintAstraSimLines(std::ostream& out, const std::vector<record::RankSummary>& ranks) {
  for (const RankTotals& t : TotalsPerRank(ranks)) {
    out << fmt::format("sys[{}] finished, {} cycles, exposed communication {} cycles.\n", t.rank,
                       t.elapsed_ns, t.exposed_comm_ns);
  }
}

void PrintAstraSimLinesBounded(std::ostream& out, const std::vector<record::RankSummary>& ranks,
                               size_t max_lines, const std::vector<int>& interest) {
  std::vector<RankTotals> totals = TotalsPerRank(ranks);
  if (totals.size() <= max_lines) {
    PrintAstraSimLines(out, ranks);
    return;
  }
  const size_t edge = std::max<size_t>(1, max_lines / 4);
  std::vector<int> wanted(interest.begin(), interest.end());
  std::sort(wanted.begin(), wanted.end());
  size_t shown = 0;
  for (size_t i = 0; i < totals.size(); ++i) {
    const RankTotals& t = totals[i];
    if (i >= edge && i + edge < totals.size() &&
        !std::binary_search(wanted.begin(), wanted.end(), t.rank)) {
      continue;
    }
    out << fmt::format("sys[{}] finished, {} cycles, exposed communication {} cycles.\n", t.rank,
                       t.elapsed_ns, t.exposed_comm_ns);
    ++shown;
  }
  // min / median / max of a figure, with the ranks at the extremes.
  auto stats = [&](TimeNs RankTotals::*field) {
    std::vector<const RankTotals*> v;
    for (const RankTotals& t : totals) v.push_back(&t);
    std::sort(v.begin(), v.end(), [&](const RankTotals* a, const RankTotals* b) {
      return a->*field != b->*field ? a->*field < b->*field : a->rank < b->rank;
    });
    return fmt::format("min {} (rank {}), median {}, max {} (rank {})", v.front()->*field,
                       v.front()->rank, v[v.size() / 2]->*field, v.back()->*field, v.back()->rank);
  };
  out << fmt::format(
      "... {} of {} ranks' lines not shown (--all-ranks prints them; "
      "--ranks-of-interest picks ranks)\n",
      totals.size() - shown, totals.size());
  out << fmt::format("all {} ranks: finished {} cycles; exposed communication {} cycles.\n",
                     totals.size(), stats(&RankTotals::elapsed_ns),
                     stats(&RankTotals::exposed_comm_ns));
}

}  // namespace genie::report
