#include "genie/record/busy_time.h"

#include <algorithm>

namespace genie::record {

TimeNs UnionLength(std::vector<std::pair<TimeNs, TimeNs>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  TimeNs total = 0;
  bool open = false;
  TimeNs cur_start = 0;
  TimeNs cur_end = 0;
  for (const auto& [s, e] : intervals) {
    if (e <= s) continue;
    if (open && s <= cur_end) {
      cur_end = std::max(cur_end, e);
      continue;
    }
    if (open) total += cur_end - cur_start;
    open = true;
    cur_start = s;
    cur_end = e;
  }
  if (open) total += cur_end - cur_start;
  return total;
}

RankSummary SummarizeRank(const std::vector<OpEvent>& events, int rank, int iteration,
                          TimeNs start, TimeNs finish) {
  RankSummary s;
  s.rank = rank;
  s.iteration = iteration;
  s.start = start;
  s.finish = finish;
  std::vector<std::pair<TimeNs, TimeNs>> comm;
  for (const OpEvent& e : events) {
    if (e.rank != rank || e.iteration != iteration) continue;
    if (e.kind == OpKind::kCompute && !e.is_cpu_op) s.compute_ns += e.duration();
    if (e.is_comm()) comm.emplace_back(e.start, e.end);
  }
  s.comm_ns = UnionLength(std::move(comm));
  s.exposed_comm_ns = finish - start - s.compute_ns;
  return s;
}

}  // namespace genie::record
