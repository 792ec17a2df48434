#include "genie/workload/workload_summary.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "genie/common/units.h"
#include "genie/common/wire_limits.h"
#include "genie/trace/comm_groups.h"
#include "genie/workload/rank_graph.h"

namespace genie::workload {
namespace {

const char* kNodeTypeNames[] = {"INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE",
                                "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE",
                                "COMM_RECV_NODE", "COMM_COLL_NODE"};

struct CollRec {
  int64_t group;
  CollectiveType type;
  Bytes size;
  NodeId id;
};

struct P2pRec {
  int src, dst;
  int64_t tag;
  Bytes size;
  NodeId id;
};

std::string Named(const char* name, const std::string& text) {
  return "[" + std::string(name) + "] " + text;
}

// "[name] ..." -> "name".
std::string NameOf(const std::string& message) {
  if (message.size() > 2 && message[0] == '[') {
    auto end = message.find(']');
    if (end != std::string::npos) return message.substr(1, end - 1);
  }
  return "error";
}

std::string GroupName(int64_t group) {
  return group == trace::kWorldGroupId ? std::string("world") : "group " + std::to_string(group);
}

std::string RanksText(const std::vector<int>& ranks, size_t limit = 16) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < limit; ++i) s += (i ? "," : "") + std::to_string(ranks[i]);
  if (ranks.size() > limit) s += ",...";
  return s;
}

std::string CollText(const CollRec& c) {
  return fmt::format("{} of {} B (node {})", CollectiveTypeName(c.type), c.size, c.id);
}

}  // namespace

Result<WorkloadSummary> InspectWorkload(const trace::WorkloadFiles& files,
                                        const ReadOptions& options) {
  WorkloadSummary summary;
  summary.files = files;
  summary.options = options;
  const int n = files.world_size();
  trace::CommGroups groups;
  if (!files.comm_group_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(groups, trace::CommGroups::Load(files.comm_group_path));
  }
  std::vector<std::vector<CollRec>> colls(static_cast<size_t>(n));
  std::vector<P2pRec> sends, recvs;
  std::vector<std::string> cross;

  for (int r = 0; r < n; ++r) {
    RankSummary rs;
    rs.rank = r;
    rs.path = files.rank_paths[static_cast<size_t>(r)];
    auto opened = RankGraph::Open(rs.path, r, options);
    if (!opened.ok()) {
      rs.problems.push_back(opened.status().message());
      summary.ranks.push_back(std::move(rs));
      continue;
    }
    RankGraph& graph = **opened;
    rs.readable = true;
    rs.nodes = graph.size();
    rs.ctrl_deps_counted = graph.ctrl_deps_counted();
    for (size_t t = 0; t < graph.type_counts().size(); ++t) {
      if (graph.type_counts()[t] > 0) rs.nodes_by_type[kNodeTypeNames[t]] = graph.type_counts()[t];
    }
    for (const auto& [id, members] : graph.metadata_groups().all()) {
      if (groups.Find(id) == nullptr) groups.Add(id, members);
    }
    // Walk in issue order (smallest ready id first), decoding every node once.
    std::map<std::string, std::pair<std::string, uint64_t>> errors;  // name -> (first, count)
    while (!graph.ready().empty()) {
      NodeId id = *graph.ready().begin();
      graph.Take(id);
      auto op = graph.Load(id);
      graph.Complete(id);
      if (!op.ok()) {
        auto& e = errors[NameOf(op.status().message())];
        if (e.second++ == 0) e.first = op.status().message();
        continue;
      }
      switch (op->kind) {
        case OpKind::kCompute:
          if (op->is_cpu_op) {
            rs.cpu_ns += op->duration_ns;
          } else {
            rs.compute_ns += op->duration_ns;
          }
          break;
        case OpKind::kCollective: {
          auto& stats = rs.collectives[CollectiveTypeName(op->coll_type)];
          ++stats.count;
          stats.total_bytes += op->comm_size;
          ++stats.sizes[op->comm_size];
          colls[static_cast<size_t>(r)].push_back({op->group, op->coll_type, op->comm_size, id});
          break;
        }
        case OpKind::kSend:
        case OpKind::kRecv:
          if (op->comm_size > kMaxWireMessageBytes) {
            auto& e = errors["p2p-too-large"];
            if (e.second++ == 0) {
              e.first = fmt::format(
                  "{} (rank {}): node {} ({}) {} {} {} rank {}: larger than one message may be "
                  "on the wire ({}); split it into several SEND/RECV nodes",
                  rs.path, r, id, op->name, op->kind == OpKind::kSend ? "sends" : "receives",
                  FormatBytes(op->comm_size), op->kind == OpKind::kSend ? "to" : "from",
                  op->kind == OpKind::kSend ? op->dst : op->src, FormatBytes(kMaxWireMessageBytes));
            }
          }
          if (op->kind == OpKind::kRecv) {
            ++rs.recvs;
            rs.recv_bytes += op->comm_size;
            recvs.push_back({op->src, op->dst, op->tag, op->comm_size, id});
            break;
          }
          ++rs.sends;
          rs.send_bytes += op->comm_size;
          sends.push_back({op->src, op->dst, op->tag, op->comm_size, id});
          break;
        default:
          break;
      }
    }
    if (graph.type_counts()[ChakraProtoMsg::COMM_COLL_NODE] > 0) {
      auto it = graph.warning_counts().find("cpu-collective-wrapper");
      rs.cpu_collective_wrappers = it == graph.warning_counts().end() ? 0 : it->second;
    }
    if (!graph.AllComplete()) {
      rs.problems.push_back(fmt::format("{} (rank {}): only {} of {} nodes could be reached",
                                        rs.path, r, graph.completed(), graph.size()));
    }
    for (const auto& [name, e] : errors) {
      rs.problems.push_back(e.second > 1 ? fmt::format("{} (and {} more nodes on this rank)",
                                                       e.first, e.second - 1)
                                         : e.first);
    }
    rs.warnings = graph.warnings();
    summary.ranks.push_back(std::move(rs));
  }

  // Comm groups: members issue the same sequence of (type, size).
  std::map<int64_t, std::vector<int>> members_of;
  std::set<int64_t> unknown;
  for (int r = 0; r < n; ++r) {
    std::set<int64_t> reported;
    for (const CollRec& c : colls[static_cast<size_t>(r)]) {
      if (!members_of.count(c.group) && !unknown.count(c.group)) {
        auto m = groups.Resolve(c.group, n);
        if (m.ok()) {
          members_of[c.group] = *m;
        } else if (m.status().code() == Status::Code::kNotFound) {
          // As ASTRA-sim (and genie's executor) do: an undefined group means every rank.
          unknown.insert(c.group);
          summary.warnings.push_back(Named(
              kProblemUnknownGroup,
              fmt::format("rank {} node {}: {}; all ranks are used, as ASTRA-sim does", r, c.id,
                          m.status().message())));
          auto world = groups.Resolve(trace::kWorldGroupId, n);
          members_of[c.group] = *world;
        } else {
          unknown.insert(c.group);
          cross.push_back(Named(kProblemUnknownGroup,
                                fmt::format("rank {} node {}: {}", r, c.id, m.status().message())));
        }
      }
      auto it = members_of.find(c.group);
      if (it == members_of.end()) continue;
      if (!std::binary_search(it->second.begin(), it->second.end(), r) &&
          reported.insert(c.group).second) {
        cross.push_back(Named(kProblemNotInGroup,
                              fmt::format("rank {} issues {} in {} but is not one of its ranks "
                                          "({}); check the comm-group file",
                                          r, CollText(c), GroupName(c.group),
                                          RanksText(it->second))));
      }
    }
  }
  for (const auto& [group, members] : members_of) {
    summary.groups[group] = members;
    std::vector<std::vector<const CollRec*>> seqs;
    for (int r : members) {
      std::vector<const CollRec*> seq;
      for (const CollRec& c : colls[static_cast<size_t>(r)]) {
        if (c.group == group) seq.push_back(&c);
      }
      seqs.push_back(std::move(seq));
    }
    if (!summary.ranks[static_cast<size_t>(members[0])].readable) continue;
    for (size_t k = 1; k < members.size(); ++k) {
      if (!summary.ranks[static_cast<size_t>(members[k])].readable) continue;
      const auto& a = seqs[0];
      const auto& b = seqs[k];
      size_t i = 0;
      while (i < a.size() && i < b.size() && a[i]->type == b[i]->type && a[i]->size == b[i]->size) {
        ++i;
      }
      if (i == a.size() && i == b.size()) continue;
      std::string what;
      if (i < a.size() && i < b.size()) {
        what = fmt::format("collective #{} is {} on rank {} but {} on rank {}", i + 1,
                           CollText(*a[i]), members[0], CollText(*b[i]), members[k]);
      } else {
        what = fmt::format("rank {} issues {} collectives in it, rank {} issues {}", members[0],
                           a.size(), members[k], b.size());
      }
      cross.push_back(Named(kProblemCollectiveMismatch,
                            fmt::format("{} (ranks {}): {}; those ranks would hang", GroupName(group),
                                        RanksText(members), what)));
      break;  // one report per group
    }
  }

  // Point-to-point: every SEND has its RECV (same src, dst, tag; sizes in order).
  using Key = std::tuple<int, int, int64_t>;
  std::map<Key, std::vector<const P2pRec*>> send_by, recv_by;
  size_t bad = 0;
  for (const P2pRec& s : sends) {
    if (s.dst < 0 || s.dst >= n) {
      if (++bad <= 10) {
        cross.push_back(Named(
            s.dst < 0 ? kProblemSendWithoutRecv : kProblemBadPeer,
            s.dst < 0 ? fmt::format("rank {} node {}: SEND without a destination (no comm_dst), "
                                    "so no RECV can match it",
                                    s.src, s.id)
                      : fmt::format("rank {} node {}: SEND to rank {}, but the workload has {} ranks",
                                    s.src, s.id, s.dst, n)));
      }
      continue;
    }
    send_by[{s.src, s.dst, s.tag}].push_back(&s);
  }
  for (const P2pRec& v : recvs) {
    if (v.src < 0 || v.src >= n) {
      if (++bad <= 10) {
        cross.push_back(Named(
            v.src < 0 ? kProblemRecvWithoutSend : kProblemBadPeer,
            v.src < 0 ? fmt::format("rank {} node {}: RECV without a source (no comm_src), so no "
                                    "SEND can match it",
                                    v.dst, v.id)
                      : fmt::format("rank {} node {}: RECV from rank {}, but the workload has {} "
                                    "ranks",
                                    v.dst, v.id, v.src, n)));
      }
      continue;
    }
    recv_by[{v.src, v.dst, v.tag}].push_back(&v);
  }
  size_t p2p_reports = 0;
  for (const auto& [key, list] : send_by) {
    auto [src, dst, tag] = key;
    auto it = recv_by.find(key);
    size_t matched = it == recv_by.end() ? 0 : it->second.size();
    if (matched < list.size() && ++p2p_reports <= 20) {
      cross.push_back(Named(kProblemSendWithoutRecv,
                            fmt::format("rank {} sends {} message(s) to rank {} with tag {} (first "
                                        "node {}) but rank {} posts {} matching RECV(s)",
                                        src, list.size(), dst, tag, list[0]->id, dst, matched)));
    }
    for (size_t i = 0; i < matched && i < list.size(); ++i) {
      if (list[i]->size != it->second[i]->size && ++p2p_reports <= 20) {
        cross.push_back(Named(kProblemP2pSizeMismatch,
                              fmt::format("rank {} node {} sends {} B to rank {} (tag {}) but rank "
                                          "{} node {} receives {} B",
                                          src, list[i]->id, list[i]->size, dst, tag, dst,
                                          it->second[i]->id, it->second[i]->size)));
        break;
      }
    }
  }
  for (const auto& [key, list] : recv_by) {
    auto [src, dst, tag] = key;
    auto it = send_by.find(key);
    size_t matched = it == send_by.end() ? 0 : it->second.size();
    if (matched < list.size() && ++p2p_reports <= 20) {
      cross.push_back(Named(kProblemRecvWithoutSend,
                            fmt::format("rank {} receives {} message(s) from rank {} with tag {} "
                                        "(first node {}) but rank {} sends {}",
                                        dst, list.size(), src, tag, list[0]->id, src, matched)));
    }
  }
  if (bad > 10 || p2p_reports > 20) {
    cross.push_back(fmt::format("... and {} more point-to-point problems",
                                (bad > 10 ? bad - 10 : 0) + (p2p_reports > 20 ? p2p_reports - 20 : 0)));
  }

  std::vector<std::string> cross_warnings = std::move(summary.warnings);
  summary.warnings.clear();
  for (const RankSummary& rs : summary.ranks) {
    for (const auto& p : rs.problems) summary.problems.push_back(p);
    for (const auto& w : rs.warnings) summary.warnings.push_back(w);
  }
  for (auto& w : cross_warnings) summary.warnings.push_back(std::move(w));
  for (auto& p : cross) summary.problems.push_back(std::move(p));
  return summary;
}

nlohmann::json ToJson(const WorkloadSummary& s) {
  nlohmann::json j;
  j["workload"] = {{"dir", s.files.dir},
                   {"name", s.files.name},
                   {"ranks", s.files.world_size()},
                   {"comm_group", s.files.comm_group_path}};
  j["options"] = {{"ctrl_deps", CtrlDepsName(s.options.ctrl_deps)}};
  if (s.options.default_comm_size) j["options"]["default_comm_size"] = *s.options.default_comm_size;
  j["runnable"] = s.runnable();
  j["problems"] = s.problems;
  j["warnings"] = s.warnings;
  nlohmann::json groups = nlohmann::json::object();
  for (const auto& [g, m] : s.groups) {
    groups[g == trace::kWorldGroupId ? "world" : std::to_string(g)] = m;
  }
  j["groups"] = groups;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankSummary& r : s.ranks) {
    nlohmann::json colls = nlohmann::json::object();
    for (const auto& [name, c] : r.collectives) {
      nlohmann::json sizes = nlohmann::json::object();
      for (const auto& [size, count] : c.sizes) sizes[std::to_string(size)] = count;
      colls[name] = {{"count", c.count}, {"total_bytes", c.total_bytes}, {"sizes", sizes}};
    }
    ranks.push_back({{"rank", r.rank},
                     {"path", r.path},
                     {"readable", r.readable},
                     {"nodes", r.nodes},
                     {"nodes_by_type", r.nodes_by_type},
                     {"collectives", colls},
                     {"cpu_collective_wrappers", r.cpu_collective_wrappers},
                     {"sends", r.sends},
                     {"recvs", r.recvs},
                     {"send_bytes", r.send_bytes},
                     {"recv_bytes", r.recv_bytes},
                     {"compute_ns", r.compute_ns},
                     {"cpu_ns", r.cpu_ns},
                     {"ctrl_deps_counted", r.ctrl_deps_counted},
                     {"warnings", r.warnings},
                     {"problems", r.problems}});
  }
  j["ranks"] = ranks;
  return j;
}

std::string FormatText(const WorkloadSummary& s) {
  std::ostringstream out;
  out << "workload " << (s.files.dir + "/" + s.files.name) << ": " << s.files.world_size()
      << " rank(s)";
  if (!s.files.comm_group_path.empty()) out << ", comm groups from " << s.files.comm_group_path;
  out << "\n";
  // One line per rank; identical consecutive ranks folded into a range.
  auto line_of = [](const RankSummary& r) {
    if (!r.readable) return std::string("unreadable (see problems)");
    std::string t = fmt::format("{} nodes (", r.nodes);
    bool first = true;
    for (const auto& [name, count] : r.nodes_by_type) {
      std::string shortname = name.substr(0, name.size() - 5);  // drop "_NODE"
      t += fmt::format("{}{} {}", first ? "" : ", ", shortname, count);
      first = false;
    }
    t += ")";
    if (!r.collectives.empty()) {
      t += "; collectives:";
      for (const auto& [name, c] : r.collectives) {
        t += fmt::format(" {} x{} ({})", name, c.count, FormatBytes(c.total_bytes));
      }
    }
    if (r.cpu_collective_wrappers > 0) {
      t += fmt::format("; {} CPU-side collective wrappers", r.cpu_collective_wrappers);
    }
    if (r.sends + r.recvs > 0) {
      t += fmt::format("; send x{} ({}), recv x{} ({})", r.sends, FormatBytes(r.send_bytes),
                       r.recvs, FormatBytes(r.recv_bytes));
    }
    t += "; compute " + FormatDuration(r.compute_ns);
    if (r.cpu_ns > 0) t += ", cpu " + FormatDuration(r.cpu_ns);
    if (!r.ctrl_deps_counted) t += "; data_deps only";
    return t;
  };
  for (size_t i = 0; i < s.ranks.size();) {
    std::string line = line_of(s.ranks[i]);
    size_t j = i + 1;
    while (j < s.ranks.size() && line_of(s.ranks[j]) == line) ++j;
    if (j - i == 1) {
      out << "  rank " << s.ranks[i].rank << ": " << line << "\n";
    } else {
      out << "  ranks " << s.ranks[i].rank << "-" << s.ranks[j - 1].rank << ": " << line << "\n";
    }
    i = j;
  }
  if (!s.groups.empty()) {
    out << "comm groups used:";
    for (const auto& [g, m] : s.groups) out << " " << GroupName(g) << "={" << RanksText(m, 8) << "}";
    out << "\n";
  }
  if (!s.warnings.empty()) {
    out << s.warnings.size() << " warning(s):\n";
    for (const auto& w : s.warnings) out << "  " << w << "\n";
  }
  if (s.runnable()) {
    out << "runnable: yes\n";
  } else {
    out << "runnable: NO, " << s.problems.size() << " problem(s):\n";
    for (const auto& p : s.problems) out << "  " << p << "\n";
  }
  return out.str();
}

}  // namespace genie::workload
