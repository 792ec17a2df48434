#include "genie/report/ops_behind.h"

#include <fmt/format.h>

#include <algorithm>
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
  return std::make_tuple(-a.added_ns(), a.iteration, a.node) <
         std::make_tuple(-b.added_ns(), b.iteration, b.node);
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

std::vector<OpBehind> OpsBehind(const std::vector<const record::OpEvent*>& measured,
                                TimeNs measured_start, const std::vector<record::OpEvent>& expected,
                                size_t keep) {
  std::map<std::pair<int, NodeId>, const record::OpEvent*> model;
  for (const auto& e : expected) {
    if (e.is_comm()) model[{e.rank, e.node}] = &e;
  }
  // The ranks' parts of one collective are one entry, matched as the runtime matches them: by
  // group and position in node-id order among the rank's collectives of that group (their node
  // ids differ in many traces). A point-to-point op is its rank's own entry.
  std::map<std::pair<int, int64_t>, std::vector<NodeId>> order;  // (rank, group) -> node ids
  for (const record::OpEvent* e : measured) {
    if (e->kind == OpKind::kCollective) order[{e->rank, e->group}].push_back(e->node);
  }
  for (auto& [key, nodes] : order) std::sort(nodes.begin(), nodes.end());
  std::map<std::tuple<int, int64_t, int64_t>, OpBehind> ops;
  for (const record::OpEvent* run_op : measured) {
    const record::OpEvent& e = *run_op;
    if (!e.is_comm()) continue;
    auto m = model.find({e.rank, e.node});
    if (m == model.end()) continue;
    const record::OpEvent& p = *m->second;
    std::tuple<int, int64_t, int64_t> key;
    if (e.kind == OpKind::kCollective) {
      const auto& nodes = order[{e.rank, e.group}];
      key = {-1, e.group, std::lower_bound(nodes.begin(), nodes.end(), e.node) - nodes.begin()};
    } else {
      key = {e.rank, static_cast<int64_t>(e.node), 0};
    }
    auto [it, fresh] = ops.try_emplace(key);
    OpBehind& op = it->second;
    const TimeNs issue = e.start - measured_start, end = e.end - measured_start;
    if (fresh) {
      op.measured_issue_ns = issue;
      op.measured_end_ns = end;
      op.expected_issue_ns = p.start;
      op.expected_end_ns = p.end;
    }
    if (fresh || e.rank < op.ranks.front()) {  // named as on its lowest rank
      op.iteration = e.iteration;
      op.node = e.node;
      op.name = e.name;
      op.type = TypeOf(e);
      op.size = e.size;
      op.group = e.group;
    }
    op.ranks.insert(std::upper_bound(op.ranks.begin(), op.ranks.end(), e.rank), e.rank);
    op.measured_issue_ns = std::max(op.measured_issue_ns, issue);
    op.measured_end_ns = std::max(op.measured_end_ns, end);
    op.expected_issue_ns = std::max(op.expected_issue_ns, p.start);
    op.expected_end_ns = std::max(op.expected_end_ns, p.end);
  }
  std::vector<OpBehind> out;
  out.reserve(ops.size());
  for (auto& [key, op] : ops) out.push_back(std::move(op));
  std::sort(out.begin(), out.end(), Before);
  if (out.size() > keep) out.resize(keep);
  return out;
}

std::vector<OpBehind> FurthestBehind(const std::vector<std::vector<OpBehind>>& lists, size_t keep) {
  std::vector<OpBehind> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end(), Before);
  if (all.size() > keep) all.resize(keep);
  return all;
}

std::string FormatOpsBehind(const std::vector<OpBehind>& ops) {
  if (ops.empty()) return "";
  std::string out =
      "# the ops furthest behind the model, each beside its iteration's own prediction (time: "
      "from its last rank's issue to its end; added = time - expected; late = how long after "
      "the model's end it ended)\n"
      "#  iter    node  type                  size  ranks               time     expected  "
      "ratio        added         late  name\n";
  for (const auto& op : ops) {
    std::string ranks = FormatRanges(RangesOf(op.ranks));
    if (ranks.size() > 14) ranks = ranks.substr(0, 11) + "...";
    out += fmt::format(
        "  {:>5} {:>7}  {:<16} {:>9}  {:<14} {:>10} {:>12} {:>6.2f} {:>12} {:>12}  {}\n",
        op.iteration, op.node, op.type, FormatBytes(op.size), ranks,
        FormatDuration(op.measured_ns()), FormatDuration(op.expected_ns()), op.ratio(),
        FormatDuration(op.added_ns()), FormatDuration(op.late_ns()), op.name);
  }
  return out;
}

nlohmann::json ToJson(const OpBehind& op) {
  return {{"iteration", op.iteration},
          {"node", op.node},
          {"name", op.name},
          {"type", op.type},
          {"size", op.size},
          {"group", op.group},
          {"ranks", op.ranks},
          {"measured_issue_ns", op.measured_issue_ns},
          {"measured_end_ns", op.measured_end_ns},
          {"expected_issue_ns", op.expected_issue_ns},
          {"expected_end_ns", op.expected_end_ns},
          {"measured_ns", op.measured_ns()},
          {"expected_ns", op.expected_ns()},
          {"ratio", op.ratio()},
          {"added_ns", op.added_ns()},
          {"late_ns", op.late_ns()}};
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
  op.measured_issue_ns = j.value("measured_issue_ns", TimeNs{0});
  op.measured_end_ns = j.value("measured_end_ns", TimeNs{0});
  op.expected_issue_ns = j.value("expected_issue_ns", TimeNs{0});
  op.expected_end_ns = j.value("expected_end_ns", TimeNs{0});
  return op;
}

}  // namespace genie::report
