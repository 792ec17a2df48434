#include "genie/record/event_json.h"

#include <fmt/format.h>

#include <iterator>
#include <string_view>

#include "genie/record/json_check.h"
#include "genie/record/names.h"

namespace genie::record {

using nlohmann::json;

json ToJson(const OpEvent& e) {
  json j = {
      {"rank", e.rank},           {"iteration", e.iteration}, {"node", e.node},   {"name", e.name},
      {"kind", KindName(e.kind)}, {"is_cpu_op", e.is_cpu_op}, {"start", e.start}, {"end", e.end}};
  if (e.is_comm()) {
    if (e.kind == OpKind::kCollective) j["type"] = CollectiveName(e.coll_type);
    j["size"] = e.size;
    j["group"] = e.group;
    j["group_size"] = e.group_size;
    j["algorithm"] = e.algorithm;
    if (e.peer >= 0) j["peer"] = e.peer;
    j["bytes_sent"] = e.bytes_sent;
    j["bytes_received"] = e.bytes_received;
  }
  if (!e.phases.empty()) {
    json phases = json::array();
    for (const PhaseSpan& p : e.phases) {
      phases.push_back({{"chunk", p.chunk},
                        {"dim", p.dim},
                        {"op", CollectiveName(p.op)},
                        {"start", p.start},
                        {"end", p.end}});
    }
    j["phases"] = std::move(phases);
  }
  return j;
}

namespace {

// A JSON string literal. Names are ASCII in practice; anything else goes through nlohmann so that
// invalid UTF-8 is replaced rather than written raw.
void AppendString(std::string_view v, std::string* out) {
  for (unsigned char c : v) {
    if (c >= 0x80) {
      *out += json(std::string(v)).dump(-1, ' ', false, json::error_handler_t::replace);
      return;
    }
  }
  out->push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      fmt::format_to(std::back_inserter(*out), "\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace

void AppendOpRecord(const OpEvent& e, std::string* out) {
  auto it = std::back_inserter(*out);
  fmt::format_to(it,
                 "{{\"record\":\"op\",\"rank\":{},\"iteration\":{},\"node\":{},\"name\":", e.rank,
                 e.iteration, e.node);
  AppendString(e.name, out);
  fmt::format_to(it, ",\"kind\":\"{}\",\"is_cpu_op\":{},\"start\":{},\"end\":{}", KindName(e.kind),
                 e.is_cpu_op, e.start, e.end);
  if (e.is_comm()) {
    if (e.kind == OpKind::kCollective) {
      fmt::format_to(it, ",\"type\":\"{}\"", CollectiveName(e.coll_type));
    }
    fmt::format_to(it, ",\"size\":{},\"group\":{},\"group_size\":{},\"algorithm\":", e.size,
                   e.group, e.group_size);
    AppendString(e.algorithm, out);
    if (e.peer >= 0) fmt::format_to(it, ",\"peer\":{}", e.peer);
    fmt::format_to(it, ",\"bytes_sent\":{},\"bytes_received\":{}", e.bytes_sent, e.bytes_received);
  }
  if (!e.phases.empty()) {
    out->append(",\"phases\":[");
    for (size_t i = 0; i < e.phases.size(); ++i) {
      const PhaseSpan& p = e.phases[i];
      fmt::format_to(it, "{}{{\"chunk\":{},\"dim\":{},\"op\":\"{}\",\"start\":{},\"end\":{}}}",
                     i ? "," : "", p.chunk, p.dim, CollectiveName(p.op), p.start, p.end);
    }
    out->push_back(']');
  }
  out->push_back('}');
}

void AppendRankRecord(const RankSummary& s, std::string* out) {
  auto it = std::back_inserter(*out);
  fmt::format_to(it,
                 "{{\"record\":\"rank\",\"rank\":{},\"iteration\":{},\"start\":{},\"finish\":{},"
                 "\"compute_ns\":{},\"comm_ns\":{},\"exposed_comm_ns\":{}",
                 s.rank, s.iteration, s.start, s.finish, s.compute_ns, s.comm_ns,
                 s.exposed_comm_ns);
  // Only under compute faults, so that other records stay as they were.
  if (s.compute_excess_ns != 0) {
    fmt::format_to(it, ",\"compute_excess_ns\":{}", s.compute_excess_ns);
  }
  if (s.stall_ns != 0) fmt::format_to(it, ",\"stall_ns\":{}", s.stall_ns);
  if (s.cpu_wait_ns != 0) fmt::format_to(it, ",\"cpu_wait_ns\":{}", s.cpu_wait_ns);
  if (s.tcp_timeouts != 0) {
    fmt::format_to(it, ",\"tcp_timeouts\":{},\"host_id\":{}", s.tcp_timeouts, s.host_id);
  }
  if (s.probe_rtt_episodes != 0 || s.probe_rtt_ns != 0) {
    fmt::format_to(it, ",\"probe_rtt_episodes\":{},\"probe_rtt_ns\":{}", s.probe_rtt_episodes,
                   s.probe_rtt_ns);
  }
  if (s.probe_rtt_at_ns >= 0) {
    fmt::format_to(it, ",\"probe_rtt_at_ns\":{}", s.probe_rtt_at_ns);
  }
  out->push_back('}');
}

json ToJson(const RankSummary& s) {
  json j = {{"rank", s.rank},
            {"iteration", s.iteration},
            {"start", s.start},
            {"finish", s.finish},
            {"compute_ns", s.compute_ns},
            {"comm_ns", s.comm_ns},
            {"exposed_comm_ns", s.exposed_comm_ns}};
  if (s.compute_excess_ns != 0) j["compute_excess_ns"] = s.compute_excess_ns;
  if (s.stall_ns != 0) j["stall_ns"] = s.stall_ns;
  if (s.cpu_wait_ns != 0) j["cpu_wait_ns"] = s.cpu_wait_ns;
  if (s.tcp_timeouts != 0) {
    j["tcp_timeouts"] = s.tcp_timeouts;
    j["host_id"] = s.host_id;
  }
  if (s.probe_rtt_episodes != 0 || s.probe_rtt_ns != 0) {
    j["probe_rtt_episodes"] = s.probe_rtt_episodes;
    j["probe_rtt_ns"] = s.probe_rtt_ns;
  }
  if (s.probe_rtt_at_ns >= 0) j["probe_rtt_at_ns"] = s.probe_rtt_at_ns;
  return j;
}

Result<OpEvent> OpEventFromJson(const json& j, const std::string& where,
                                const std::string& remedy) {
  FieldReader r(j, where, remedy);
  OpEvent e;
  std::string kind;
  std::string type;
  // The kind first: it decides what the record is.
  r.Required("kind", &kind);
  if (!r.ok()) return r.status();
  auto k = ParseKind(kind);
  if (!k) {
    r.FailField("kind", fmt::format("is \"{}\", not an op kind genie knows", kind));
    return r.status();
  }
  e.kind = *k;
  r.Required("rank", &e.rank)
      .Optional("iteration", &e.iteration)
      .Optional("node", &e.node)
      .Optional("name", &e.name)
      .Optional("is_cpu_op", &e.is_cpu_op)
      .Optional("start", &e.start)
      .Optional("end", &e.end)
      .Optional("type", &type)
      .Optional("size", &e.size)
      .Optional("group", &e.group)
      .Optional("group_size", &e.group_size)
      .Optional("algorithm", &e.algorithm)
      .Optional("peer", &e.peer)
      .Optional("bytes_sent", &e.bytes_sent)
      .Optional("bytes_received", &e.bytes_received);
  if (!r.ok()) return r.status();
  if (e.rank < 0) r.FailField("rank", fmt::format("is {}; ranks start at 0", e.rank));
  if (e.end < e.start) {
    r.Fail(fmt::format("the op ends ({}) before it starts ({})", e.end, e.start));
  }
  if (e.group_size < 0) r.FailField("group_size", "is negative");
  if (!type.empty()) {
    auto t = ParseCollective(type);
    if (!t) r.FailField("type", fmt::format("is \"{}\", not a collective genie knows", type));
    if (t) e.coll_type = *t;
  }
  // A multi-dimensional collective's phases (ToJson writes them), read back so that a stream
  // turned into results.json keeps them.
  auto phases = j.find("phases");
  if (r.ok() && phases != j.end()) {
    if (!phases->is_array()) r.FailField("phases", "should be an array");
    for (size_t i = 0; r.ok() && phases->is_array() && i < phases->size(); ++i) {
      FieldReader pr((*phases)[i], fmt::format("{} phases[{}]", where, i), remedy);
      int64_t chunk = 0, dim = 0;
      std::string op;
      PhaseSpan p;
      pr.Required("chunk", &chunk)
          .Required("dim", &dim)
          .Required("op", &op)
          .Optional("start", &p.start)
          .Optional("end", &p.end);
      if (!pr.ok()) return pr.status();
      auto t = ParseCollective(op);
      if (chunk < 0 || chunk > UINT32_MAX || dim < 0 || dim > UINT16_MAX || !t) {
        r.FailField("phases", fmt::format("entry {} has a chunk, dim or op out of range", i));
        break;
      }
      p.chunk = static_cast<uint32_t>(chunk);
      p.dim = static_cast<uint16_t>(dim);
      p.op = *t;
      e.phases.push_back(p);
    }
  }
  if (!r.ok()) return r.status();
  return e;
}

Result<RankSummary> RankSummaryFromJson(const json& j, const std::string& where,
                                        const std::string& remedy) {
  FieldReader r(j, where, remedy);
  RankSummary s;
  r.Required("rank", &s.rank)
      .Required("iteration", &s.iteration)
      .Optional("start", &s.start)
      .Optional("finish", &s.finish)
      .Optional("compute_ns", &s.compute_ns)
      .Optional("comm_ns", &s.comm_ns)
      .Optional("exposed_comm_ns", &s.exposed_comm_ns)
      .Optional("compute_excess_ns", &s.compute_excess_ns)
      .Optional("stall_ns", &s.stall_ns)
      .Optional("cpu_wait_ns", &s.cpu_wait_ns)
      .Optional("tcp_timeouts", &s.tcp_timeouts)
      .Optional("host_id", &s.host_id)
      .Optional("probe_rtt_episodes", &s.probe_rtt_episodes)
      .Optional("probe_rtt_ns", &s.probe_rtt_ns)
      .Optional("probe_rtt_at_ns", &s.probe_rtt_at_ns);
  if (!r.ok()) return r.status();
  if (s.tcp_timeouts < 0) r.FailField("tcp_timeouts", "is negative");
  if (s.probe_rtt_episodes < 0) r.FailField("probe_rtt_episodes", "is negative");
  if (s.probe_rtt_ns < 0) r.FailField("probe_rtt_ns", "is negative");
  if (s.stall_ns < 0) r.FailField("stall_ns", "is negative");
  if (s.cpu_wait_ns < 0) r.FailField("cpu_wait_ns", "is negative");
  if (s.rank < 0) r.FailField("rank", fmt::format("is {}; ranks start at 0", s.rank));
  if (s.finish < s.start) {
    r.Fail(fmt::format("the iteration finishes ({}) before it starts ({})", s.finish, s.start));
  }
  if (!r.ok()) return r.status();
  return s;
}

Status CheckTrafficRecord(const json& j, const std::string& where, const std::string& remedy) {
  FieldReader r(j, where, remedy);
  int rank = 0;
  r.Optional("rank", &rank);
  const json* peers = r.Array("peers");
  if (peers == nullptr) return r.status();
  for (size_t i = 0; i < peers->size(); ++i) {
    FieldReader p((*peers)[i], fmt::format("{}{}peers[{}]", where, where.empty() ? "" : ": ", i),
                  remedy);
    int peer = 0;
    uint64_t bytes = 0;
    p.Optional("peer", &peer);
    for (const char* key : {"socket_bytes_sent", "network_bytes_sent", "network_messages_sent",
                            "modelled_bytes_sent", "modelled_messages_sent"}) {
      p.Optional(key, &bytes);
    }
    if (!p.ok()) return p.status();
  }
  return r.status();
}

Status CheckClockRecord(const json& j, const std::string& where, const std::string& remedy) {
  FieldReader r(j, where, remedy);
  int rank = 0;
  TimeNs ns = 0;
  std::string text;
  r.Optional("rank", &rank)
      .Optional("run_id", &text)
      .Optional("host_id", &text)
      .Optional("offset_ns", &ns)
      .Optional("rtt_ns", &ns);
  return r.status();
}

}  // namespace genie::record
