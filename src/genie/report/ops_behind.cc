#include "genie/report/ops_behind.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>

#include "genie/report/completeness.h"

namespace genie::report {
namespace {

std::string TypeOf(const record::OpEvent& e) {
  return e.kind == OpKind::kCollective ? CollectiveTypeName(e.coll_type) : OpKindName(e.kind);
}

// Most behind first; ties by iteration, node: the order is the same on every run of the data.
bool Before(const OpBehind& a, const OpBehind& b) {
  return std::make_tuple(-a.excess_ns(), a.iteration, a.node) <
         std::make_tuple(-b.excess_ns(), b.iteration, b.node);
}

Ranges RangesOf(const std::vector<int>& sorted) {
  Ranges out;
  for (int r : sorted) {
    if (!out.empty() && out.back().second + 1 == r) {
      out.back().second = r;
    } else {
      out.emplace_back(r, r);
    }
  }
  return out;
}

}  // namespace

std::vector<OpBehind> OpsBehind(const std::vector<record::OpEvent>& measured,
                                TimeNs measured_start,
                                const std::vector<record::OpEvent>& expected, size_t keep) {
  std::map<std::pair<int, NodeId>, const record::OpEvent*> model;
  for (const auto& e : expected) {
    if (e.is_comm()) model[{e.rank, e.node}] = &e;
  }
  // The ranks' parts of one collective are one entry, matched as the runtime matches them: by
  // group and position in node-id order among the rank's collectives of that group (their node
  // ids differ in many traces). A point-to-point op is its rank's own entry.
  std::map<std::pair<int, int64_t>, std::vector<NodeId>> order;  // (rank, group) -> node ids
  for (const auto& e : measured) {
    if (e.kind == OpKind::kCollective) order[{e.rank, e.group}].push_back(e.node);
  }
  for (auto& [key, nodes] : order) std::sort(nodes.begin(), nodes.end());
  std::map<std::tuple<int, int64_t, int64_t>, OpBehind> ops;
  for (const auto& e : measured) {
    if (!e.is_comm()) continue;
    auto m = model.find({e.rank, e.node});
    if (m == model.end()) continue;
    const record::OpEvent& p = *m->second;
    std::tuple<int, int64_t, int64_t> key;
    if (e.kind == OpKind::kCollective) {
      const auto& nodes = order[{e.rank, e.group}];
      key = {-1, e.group,
             std::lower_bound(nodes.begin(), nodes.end(), e.node) - nodes.begin()};
    } else {
      key = {e.rank, static_cast<int64_t>(e.node), 0};
    }
    auto [it, fresh] = ops.try_emplace(key);
    OpBehind& op = it->second;
    const TimeNs late = (e.end - measured_start) - p.end;
    if (fresh || e.rank < op.ranks.front()) {  // named as on its lowest rank
      op.iteration = e.iteration;
      op.node = e.node;
      op.name = e.name;
      op.type = TypeOf(e);
      op.size = e.size;
      op.group = e.group;
    }
    op.late_ns = fresh ? late : std::max(op.late_ns, late);
    op.ranks.insert(std::upper_bound(op.ranks.begin(), op.ranks.end(), e.rank), e.rank);
    op.measured_ns = std::max(op.measured_ns, e.duration());
    op.expected_ns = std::max(op.expected_ns, p.duration());
  }
  std::vector<OpBehind> out;
  out.reserve(ops.size());
  for (auto& [key, op] : ops) out.push_back(std::move(op));
  std::sort(out.begin(), out.end(), Before);
  if (out.size() > keep) out.resize(keep);
  return out;
}

std::vector<OpBehind> FurthestBehind(const std::vector<std::vector<OpBehind>>& lists,
                                     size_t keep) {
  std::vector<OpBehind> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end(), Before);
  if (all.size() > keep) all.resize(keep);
  return all;
}

std::string FormatOpsBehind(const std::vector<OpBehind>& ops) {
  if (ops.empty()) return "";
  std::string out =
      "# the ops furthest behind the model (each beside its iteration's own prediction; time "
      "= issue to end on the slowest of its ranks; late = ended after the model's end)\n"
      "#  iter    node  type                  size  ranks           measured     expected  "
      "ratio         late  name\n";
  for (const auto& op : ops) {
    std::string ranks = FormatRanges(RangesOf(op.ranks));
    if (ranks.size() > 14) ranks = ranks.substr(0, 11) + "...";
    out += fmt::format("  {:>5} {:>7}  {:<16} {:>9}  {:<14} {:>10} {:>12} {:>6.2f} {:>12}  {}\n",
                       op.iteration, op.node, op.type, FormatBytes(op.size), ranks,
                       FormatDuration(op.measured_ns), FormatDuration(op.expected_ns),
                       op.ratio(),
                       (op.late_ns < 0 ? "-" : "") + FormatDuration(std::abs(op.late_ns)),
                       op.name);
  }
  return out;
}

nlohmann::json ToJson(const OpBehind& op) {
  return {{"iteration", op.iteration},     {"node", op.node},
          {"name", op.name},               {"type", op.type},
          {"size", op.size},               {"group", op.group},
          {"ranks", op.ranks},             {"measured_ns", op.measured_ns},
          {"expected_ns", op.expected_ns}, {"ratio", op.ratio()},
          {"late_ns", op.late_ns}};
}

OpBehind OpBehindFromJson(const nlohmann::json& j) {
  OpBehind op;
  if (!j.is_object()) return op;
  op.iteration = j.value("iteration", 0);
  op.node = j.value("node", NodeId{0});
  op.name = j.value("name", "");
  op.type = j.value("type", "");
  op.size = j.value("size", Bytes{0});
  op.group = j.value("group", int64_t{kWorldGroup});
  if (j.contains("ranks") && j["ranks"].is_array()) {
    for (const auto& r : j["ranks"]) {
      if (r.is_number_integer()) op.ranks.push_back(r.get<int>());
    }
  }
  op.measured_ns = j.value("measured_ns", TimeNs{0});
  op.expected_ns = j.value("expected_ns", TimeNs{0});
  op.late_ns = j.value("late_ns", TimeNs{0});
  return op;
}

}  // namespace genie::report
