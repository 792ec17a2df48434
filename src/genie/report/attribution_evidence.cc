#include "genie/report/attribution_evidence.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "genie/record/busy_time.h"
#include "genie/spec/collective_type.h"

namespace genie::report {
namespace {

bool IsGpuCompute(const record::OpEvent& e) { return e.kind == OpKind::kCompute && !e.is_cpu_op; }

}  // namespace

std::map<int, TimeNs> ComputeUnion(const std::vector<const record::OpEvent*>& ops) {
  std::map<int, std::vector<std::pair<TimeNs, TimeNs>>> spans;
  for (const record::OpEvent* e : ops) {
    if (IsGpuCompute(*e)) spans[e->rank].emplace_back(e->start, e->end);
  }
  std::map<int, TimeNs> out;
  for (auto& [rank, v] : spans) out[rank] = record::UnionLength(std::move(v));
  return out;
}

std::map<int, std::map<NodeId, TimeNs>> EffectiveComputeDurations(
    const std::vector<const record::OpEvent*>& ops) {
  std::map<int, std::vector<const record::OpEvent*>> of_rank;
  for (const record::OpEvent* e : ops) {
    if (IsGpuCompute(*e)) of_rank[e->rank].push_back(e);
  }
  std::map<int, std::map<NodeId, TimeNs>> out;
  for (auto& [rank, v] : of_rank) {
    std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) {
      return std::tie(a->start, a->end, a->node) < std::tie(b->start, b->end, b->node);
    });
    std::map<NodeId, TimeNs>& durations = out[rank];
    TimeNs covered = v.front()->start;
    for (const record::OpEvent* e : v) {
      const TimeNs from = std::max(e->start, covered);
      durations[e->node] += std::max<TimeNs>(0, e->end - from);
      covered = std::max(covered, e->end);
    }
  }
  return out;
}

std::map<int, TimeNs> FirstOpDelays(const std::vector<const record::OpEvent*>& ops,
                                    const std::vector<const record::RankSummary*>& summaries) {
  std::map<int, TimeNs> first;
  for (const record::OpEvent* e : ops) {
    auto [it, added] = first.try_emplace(e->rank, e->start);
    if (!added) it->second = std::min(it->second, e->start);
  }
  std::map<int, TimeNs> out;
  for (const record::RankSummary* s : summaries) {
    auto f = first.find(s->rank);
    out[s->rank] = f == first.end() ? 0 : std::max<TimeNs>(0, f->second - s->start);
  }
  return out;
}

std::map<int, Wait> CollectiveWaits(const std::vector<const record::OpEvent*>& ops) {
  // (rank, group) -> its collectives in node id order: the position is the match.
  std::map<std::pair<int, int64_t>, std::vector<const record::OpEvent*>> order;
  for (const record::OpEvent* e : ops) {
    if (e->kind == OpKind::kCollective) order[{e->rank, e->group}].push_back(e);
  }
  std::map<std::pair<int64_t, size_t>, std::vector<const record::OpEvent*>> matched;
  for (auto& [key, v] : order) {
    std::sort(v.begin(), v.end(), [](const auto* a, const auto* b) { return a->node < b->node; });
    for (size_t i = 0; i < v.size(); ++i) matched[{key.second, i}].push_back(v[i]);
  }
  std::map<int, Wait> out;
  for (const auto& [key, parts] : matched) {
    if (parts.size() < 2) continue;
    const record::OpEvent* last = parts.front();
    TimeNs first_issue = parts.front()->start;
    for (const record::OpEvent* p : parts) {
      if (std::tie(p->start, p->rank) > std::tie(last->start, last->rank)) last = p;
      first_issue = std::min(first_issue, p->start);
    }
    const TimeNs wait = last->start - first_issue;
    Wait& best = out[last->rank];
    if (best.late_rank >= 0 && best.wait_ns >= wait) continue;
    best.late_rank = last->rank;
    best.iteration = last->iteration;
    best.type = CollectiveTypeName(last->coll_type);
    best.node = last->node;
    best.name = last->name;
    best.group = key.first;
    best.wait_ns = wait;
    best.waiting.clear();
    for (const record::OpEvent* p : parts) {
      if (p != last) best.waiting.push_back(p->rank);
    }
    std::sort(best.waiting.begin(), best.waiting.end());
  }
  return out;
}

}  // namespace genie::report
