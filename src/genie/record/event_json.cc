#include "genie/record/event_json.h"

#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "genie/record/names.h"

namespace genie::record {

using nlohmann::json;

json ToJson(const OpEvent& e) {
  json j = {{"rank", e.rank},   {"iteration", e.iteration}, {"node", e.node},
            {"name", e.name},   {"kind", KindName(e.kind)}, {"is_cpu_op", e.is_cpu_op},
            {"start", e.start}, {"end", e.end}};
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
  fmt::format_to(it, "{{\"record\":\"op\",\"rank\":{},\"iteration\":{},\"node\":{},\"name\":",
                 e.rank, e.iteration, e.node);
  AppendString(e.name, out);
  fmt::format_to(it, ",\"kind\":\"{}\",\"is_cpu_op\":{},\"start\":{},\"end\":{}",
                 KindName(e.kind), e.is_cpu_op, e.start, e.end);
  if (e.is_comm()) {
    if (e.kind == OpKind::kCollective) {
      fmt::format_to(it, ",\"type\":\"{}\"", CollectiveName(e.coll_type));
    }
    fmt::format_to(it, ",\"size\":{},\"group\":{},\"group_size\":{},\"algorithm\":", e.size,
                   e.group, e.group_size);
    AppendString(e.algorithm, out);
    if (e.peer >= 0) fmt::format_to(it, ",\"peer\":{}", e.peer);
    fmt::format_to(it, ",\"bytes_sent\":{},\"bytes_received\":{}", e.bytes_sent,
                   e.bytes_received);
  }
  out->push_back('}');
}

json ToJson(const RankSummary& s) {
  return {{"rank", s.rank},
          {"iteration", s.iteration},
          {"start", s.start},
          {"finish", s.finish},
          {"compute_ns", s.compute_ns},
          {"comm_ns", s.comm_ns},
          {"exposed_comm_ns", s.exposed_comm_ns}};
}

namespace {

// Reads an optional field; a present field of the wrong type is an error, an absent one keeps
// the default (files stripped of timings by `genie results strip` still read back).
template <typename T>
Status Get(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::Ok();
  try {
    *out = it->get<T>();
  } catch (const json::exception& ex) {
    return Status::Corruption(fmt::format("field \"{}\" has the wrong type ({})", key, ex.what()));
  }
  return Status::Ok();
}

}  // namespace

Result<OpEvent> OpEventFromJson(const json& j) {
  if (!j.is_object()) return Status::Corruption("an op record must be a JSON object");
  OpEvent e;
  std::string kind = "invalid";
  std::string type;
  GENIE_RETURN_IF_ERROR(Get(j, "rank", &e.rank));
  GENIE_RETURN_IF_ERROR(Get(j, "iteration", &e.iteration));
  GENIE_RETURN_IF_ERROR(Get(j, "node", &e.node));
  GENIE_RETURN_IF_ERROR(Get(j, "name", &e.name));
  GENIE_RETURN_IF_ERROR(Get(j, "kind", &kind));
  GENIE_RETURN_IF_ERROR(Get(j, "is_cpu_op", &e.is_cpu_op));
  GENIE_RETURN_IF_ERROR(Get(j, "start", &e.start));
  GENIE_RETURN_IF_ERROR(Get(j, "end", &e.end));
  GENIE_RETURN_IF_ERROR(Get(j, "type", &type));
  GENIE_RETURN_IF_ERROR(Get(j, "size", &e.size));
  GENIE_RETURN_IF_ERROR(Get(j, "group", &e.group));
  GENIE_RETURN_IF_ERROR(Get(j, "group_size", &e.group_size));
  GENIE_RETURN_IF_ERROR(Get(j, "algorithm", &e.algorithm));
  GENIE_RETURN_IF_ERROR(Get(j, "peer", &e.peer));
  GENIE_RETURN_IF_ERROR(Get(j, "bytes_sent", &e.bytes_sent));
  GENIE_RETURN_IF_ERROR(Get(j, "bytes_received", &e.bytes_received));
  auto k = ParseKind(kind);
  if (!k) return Status::Corruption(fmt::format("unknown op kind \"{}\"", kind));
  e.kind = *k;
  if (!type.empty()) {
    auto t = ParseCollective(type);
    if (!t) return Status::Corruption(fmt::format("unknown collective type \"{}\"", type));
    e.coll_type = *t;
  }
  return e;
}

Result<RankSummary> RankSummaryFromJson(const json& j) {
  if (!j.is_object()) return Status::Corruption("a rank record must be a JSON object");
  RankSummary s;
  GENIE_RETURN_IF_ERROR(Get(j, "rank", &s.rank));
  GENIE_RETURN_IF_ERROR(Get(j, "iteration", &s.iteration));
  GENIE_RETURN_IF_ERROR(Get(j, "start", &s.start));
  GENIE_RETURN_IF_ERROR(Get(j, "finish", &s.finish));
  GENIE_RETURN_IF_ERROR(Get(j, "compute_ns", &s.compute_ns));
  GENIE_RETURN_IF_ERROR(Get(j, "comm_ns", &s.comm_ns));
  GENIE_RETURN_IF_ERROR(Get(j, "exposed_comm_ns", &s.exposed_comm_ns));
  return s;
}

}  // namespace genie::record
