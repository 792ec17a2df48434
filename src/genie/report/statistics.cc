#include "genie/report/statistics.h"

#include <algorithm>
#include <map>

#include "genie/record/names.h"
#include "genie/report/bandwidth.h"

namespace genie::report {

std::vector<RankTotals> TotalsPerRank(const std::vector<record::RankSummary>& ranks) {
  std::map<int, RankTotals> by_rank;
  for (const auto& s : ranks) {
    if (s.iteration < 0) continue;
    auto [it, inserted] = by_rank.try_emplace(s.rank);
    RankTotals& t = it->second;
    if (inserted) {
      t.rank = s.rank;
      t.start = s.start;
      t.finish = s.finish;
    }
    t.start = std::min(t.start, s.start);
    t.finish = std::max(t.finish, s.finish);
    t.elapsed_ns += s.finish - s.start;
    t.compute_ns += s.compute_ns;
    t.comm_ns += s.comm_ns;
    t.compute_excess_ns += s.compute_excess_ns;
    t.stall_ns += s.stall_ns;
    ++t.iterations;
  }
  std::vector<RankTotals> out;
  for (auto& [rank, t] : by_rank) {
    t.exposed_comm_ns = t.elapsed_ns - t.compute_ns - t.stall_ns;
    out.push_back(t);
  }
  return out;
}

std::vector<IterationStep> StepTimes(const std::vector<record::RankSummary>& ranks,
                                     bool with_warmups) {
  std::map<int, IterationStep> by_iter;
  for (const auto& s : ranks) {
    if (s.iteration < 0 && !with_warmups) continue;
    auto [it, inserted] = by_iter.try_emplace(s.iteration, IterationStep{s.iteration, s.start,
                                                                         s.finish});
    if (!inserted) {
      it->second.start = std::min(it->second.start, s.start);
      it->second.finish = std::max(it->second.finish, s.finish);
    }
  }
  std::vector<IterationStep> out;
  for (const auto& [i, step] : by_iter) out.push_back(step);
  return out;
}

Spread SpreadOf(std::vector<TimeNs> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
  return s;
}

std::string CommTypeName(const record::OpEvent& e) {
  switch (e.kind) {
    case OpKind::kCollective:
      return record::CollectiveName(e.coll_type);
    case OpKind::kSend:
      return "send";
    case OpKind::kRecv:
      return "recv";
    default:
      return "";
  }
}

void TypeTableAccumulator::Add(const record::OpEvent& e) {
  if (!e.is_comm() || e.iteration < 0) return;
  int key = e.kind == OpKind::kCollective ? static_cast<int>(e.coll_type)
            : e.kind == OpKind::kSend     ? 100
                                          : 101;
  Acc& a = rows_[key];
  a.row.type = CommTypeName(e);
  ++a.row.count;
  a.row.bytes += e.size;
  a.row.total_ns += e.duration();
  if (e.kind == OpKind::kCollective) {
    double s = NcclBytes(e.coll_type, e.size, e.group_size);
    a.s += s;
    a.bus_s += s * BusBwFactor(e.coll_type, e.group_size);
  } else {
    a.s += static_cast<double>(e.size);
    a.bus_s += static_cast<double>(e.size);
  }
}

std::vector<TypeRow> TypeTableAccumulator::Rows() const {
  std::vector<TypeRow> out;
  for (const auto& [key, a] : rows_) {
    TypeRow r = a.row;
    r.mean_ns = static_cast<double>(r.total_ns) / static_cast<double>(r.count);
    if (r.total_ns > 0) {
      r.algbw_gbps = a.s / static_cast<double>(r.total_ns);
      r.busbw_gbps = a.bus_s / static_cast<double>(r.total_ns);
    }
    out.push_back(r);
  }
  return out;
}

std::vector<TypeRow> CollectiveTypeTable(const std::vector<record::OpEvent>& ops) {
  TypeTableAccumulator acc;
  for (const auto& e : ops) acc.Add(e);
  return acc.Rows();
}

}  // namespace genie::report
