#include "genie/report/results_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "genie/record/event_json.h"
#include "genie/record/json_check.h"
#include "genie/record/record_stream.h"
#include "genie/report/results_json.h"

namespace genie::report {

using nlohmann::json;

namespace {

constexpr const char* kResultsRemedy =
    "the file was damaged or edited; regenerate it with genie results merge from the run's rank "
    "streams, or rerun";

// The parts of a run_info (a results JSON's provenance) that readers use: per-stream headers,
// per-rank traffic, names of cut streams.
Status CheckRunInfo(const json& info, const std::string& where) {
  record::FieldReader r(info, where, kResultsRemedy);
  GENIE_RETURN_IF_ERROR(record::CheckRunHeader(info, where, kResultsRemedy));
  const json* headers = r.Array("headers");
  const json* traffic = r.Array("traffic");
  const json* cut = r.Array("truncated_files");
  if (!r.ok()) return r.status();
  for (size_t i = 0; headers != nullptr && i < headers->size(); ++i) {
    const json& h = (*headers)[i];
    if (h.is_null()) continue;  // a stream without a header
    GENIE_RETURN_IF_ERROR(
        record::CheckRunHeader(h, fmt::format("{}.headers[{}]", where, i), kResultsRemedy));
  }
  for (size_t i = 0; traffic != nullptr && i < traffic->size(); ++i) {
    GENIE_RETURN_IF_ERROR(record::CheckTrafficRecord(
        (*traffic)[i], fmt::format("{}.traffic[{}]", where, i), kResultsRemedy));
  }
  for (size_t i = 0; cut != nullptr && i < cut->size(); ++i) {
    if (!(*cut)[i].is_string()) {
      r.Fail(fmt::format("truncated_files[{}] should be a file name", i));
      return r.status();
    }
  }
  return Status::Ok();
}

Result<RunRecords> FromResultsJson(const json& doc, const std::string& path) {
  record::FieldReader top(doc, path, kResultsRemedy);
  int version = 0;
  top.Optional("version", &version);
  if (top.ok() && version > kResultsVersion) {
    top.FailField("version", fmt::format("is {}: written by a newer genie (this one reads "
                                         "version {}); read it with that genie",
                                         version, kResultsVersion));
  }
  const json* provenance = top.Object("provenance");
  const json* offsets = top.Object("clock_offsets_ns");
  const json* collectives = top.Array("collectives");
  const json* ranks = top.Array("ranks");
  if (!top.ok()) return top.status();

  RunRecords r;
  r.run_info = provenance != nullptr ? *provenance : json::object();
  GENIE_RETURN_IF_ERROR(CheckRunInfo(r.run_info, path + ": provenance"));
  if (offsets != nullptr) {
    record::FieldReader o(*offsets, path + ": clock_offsets_ns", kResultsRemedy);
    for (const auto& [key, value] : offsets->items()) {
      TimeNs ns = 0;
      o.Required(key.c_str(), &ns);
      if (o.ok() && (key.empty() || key.find_first_not_of("0123456789") != std::string::npos ||
                     key.size() > 9)) {
        o.Fail(fmt::format("key \"{}\" should be a rank number", key));
      }
    }
    if (!o.ok()) return o.status();
    r.clock_offsets_ns = *offsets;
  }
  for (size_t i = 0; collectives != nullptr && i < collectives->size(); ++i) {
    auto e = record::OpEventFromJson((*collectives)[i],
                                     fmt::format("{}: collectives[{}]", path, i), kResultsRemedy);
    if (!e.ok()) return e.status();
    r.ops.push_back(std::move(*e));
  }
  for (size_t i = 0; ranks != nullptr && i < ranks->size(); ++i) {
    const std::string where = fmt::format("{}: ranks[{}]", path, i);
    record::FieldReader rank(ranks->at(i), where, kResultsRemedy);
    const json* iterations = rank.Array("iterations");
    if (!rank.ok()) return rank.status();
    for (size_t k = 0; iterations != nullptr && k < iterations->size(); ++k) {
      auto s = record::RankSummaryFromJson(
          (*iterations)[k], fmt::format("{}.iterations[{}]", where, k), kResultsRemedy);
      if (!s.ok()) return s.status();
      r.ranks.push_back(*s);
    }
  }
  return r;
}

}  // namespace

Result<RunRecords> LoadResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(
        fmt::format("cannot open results file {}: {}", path, std::strerror(errno)));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    return Status::IoError(fmt::format("reading {} failed: {}", path, std::strerror(errno)));
  }
  return ParseResults(ss.str(), path);
}

Result<RunRecords> ParseResults(std::string_view text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::Corruption(fmt::format(
        "{} is empty: the run stopped before writing it, or it was cut; give the run's rank "
        "streams (its output folder) instead, or rerun",
        path));
  }
  // One JSON document (a results JSON), unless too deep to handle as one: then line by line,
  // where each line's depth is checked on its own.
  json whole;
  if (record::JsonNestingDepth(text) <= record::kMaxJsonDepth) {
    whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  } else {
    whole = json(json::value_t::discarded);
  }
  if (!whole.is_discarded() && whole.is_object() && !whole.contains("record")) {
    const auto format = whole.find("format");
    if (format == whole.end() || !format->is_string() || *format != kResultsFormat) {
      return Status::InvalidArgument(fmt::format(
          "{} is JSON but not a genie results file (no \"format\": \"{}\"); give a results JSON "
          "or a rank's .jsonl stream",
          path, kResultsFormat));
    }
    return FromResultsJson(whole, path);
  }
  GENIE_ASSIGN_OR_RETURN(record::RecordStream s, record::ParseRecordStream(text, path));
  RunRecords r;
  r.run_info = std::move(s.header);
  r.ops = std::move(s.ops);
  r.ranks = std::move(s.ranks);
  r.truncated = s.truncated;
  return r;
}

Result<std::vector<std::string>> ExpandStreamPaths(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::pair<int, std::string>> found;
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      const std::string name = entry.path().filename().string();
      int rank = -1;
      if (std::sscanf(name.c_str(), "rank-%d.jsonl", &rank) == 1 && rank >= 0 &&
          name == fmt::format("rank-{}.jsonl", rank)) {
        found.emplace_back(rank, entry.path().string());
      }
    }
    if (found.empty()) {
      return Status::NotFound(fmt::format(
          "{} holds no rank streams (rank-N.jsonl); give a genie run output folder", path));
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) out.push_back(std::move(f.second));
  }
  return out;
}

Result<RunRecords> MergeStreams(const std::vector<std::string>& given,
                                const std::map<int, TimeNs>& clock_offsets_ns) {
  GENIE_ASSIGN_OR_RETURN(std::vector<std::string> paths, ExpandStreamPaths(given));
  std::vector<record::RecordStream> streams;
  std::map<int, std::string> owner;  // rank -> the file it came from
  std::string run_id, run_id_file;   // every stream of a real run names its run
  int world_size = 0;
  std::string world_size_file;
  for (const std::string& path : paths) {
    GENIE_ASSIGN_OR_RETURN(record::RecordStream s, record::ReadRecordStream(path));
    const std::string id = record::StringField(s.clock, "run_id");
    if (!id.empty() && !run_id.empty() && id != run_id) {
      return Status::InvalidArgument(fmt::format(
          "{} is from another run than {} (run id {} vs {}); merge the streams of one run", path,
          run_id_file, id, run_id));
    }
    if (!id.empty() && run_id.empty()) {
      run_id = id;
      run_id_file = path;
    }
    const int ws = static_cast<int>(record::IntField(s.header, "world_size", 0));
    if (ws > 0 && world_size > 0 && ws != world_size) {
      return Status::InvalidArgument(fmt::format(
          "{} is from a run of {} ranks but {} from one of {}; merge the streams of one run",
          path, ws, world_size_file, world_size));
    }
    if (ws > 0 && world_size == 0) {
      world_size = ws;
      world_size_file = path;
    }
    std::set<int> ranks_here;
    for (const auto& e : s.ops) ranks_here.insert(e.rank);
    for (const auto& r : s.ranks) ranks_here.insert(r.rank);
    for (int rank : ranks_here) {
      auto [it, inserted] = owner.emplace(rank, path);
      if (!inserted) {
        return Status::InvalidArgument(
            fmt::format("rank {} appears in both {} and {}; give each rank's stream once", rank,
                        it->second, path));
      }
    }
    streams.push_back(std::move(s));
  }

  // Ranks of one machine (one boot id) share a clock, so they share its best estimate: the
  // offset measured with the smallest round trip among them (rank 0's machine: exactly 0).
  struct Estimate {
    TimeNs rtt = 0;
    TimeNs offset = 0;
  };
  std::map<std::string, Estimate> per_machine;
  for (const auto& s : streams) {
    if (!record::HasField(s.clock, "offset_ns")) continue;
    const std::string host = record::StringField(s.clock, "host_id");
    const Estimate e{record::IntField(s.clock, "rtt_ns", 0),
                     record::IntField(s.clock, "offset_ns", 0)};
    auto [it, inserted] = per_machine.emplace(host, e);
    if (!inserted && !host.empty() && e.rtt < it->second.rtt) it->second = e;
  }

  RunRecords out;
  out.run_info = {
      {"merged_files", json::array()}, {"headers", json::array()}, {"traffic", json::array()}};
  std::map<int, TimeNs> applied;
  for (size_t i = 0; i < streams.size(); ++i) {
    record::RecordStream& s = streams[i];
    // Explicit offsets win; then the machine's estimate; a stream without one stays as it is.
    const bool recorded = record::HasField(s.clock, "offset_ns");
    const std::string host = recorded ? record::StringField(s.clock, "host_id") : "";
    const TimeNs measured = !recorded      ? 0
                            : host.empty() ? record::IntField(s.clock, "offset_ns", 0)
                                           : per_machine[host].offset;
    auto offset = [&](int rank) {
      auto it = clock_offsets_ns.find(rank);
      TimeNs d = it != clock_offsets_ns.end() ? it->second : measured;
      if (it != clock_offsets_ns.end() || recorded) applied[rank] = d;
      return d;
    };
    for (auto& e : s.ops) {
      TimeNs d = offset(e.rank);
      e.start += d;
      e.end += d;
      out.ops.push_back(std::move(e));
    }
    for (auto& r : s.ranks) {
      TimeNs d = offset(r.rank);
      r.start += d;
      r.finish += d;
      out.ranks.push_back(r);
    }
    out.truncated = out.truncated || s.truncated;
    const std::string name = std::filesystem::path(paths[i]).filename().string();
    if (s.truncated) out.run_info["truncated_files"].push_back(name);
    out.run_info["merged_files"].push_back(name);
    out.run_info["headers"].push_back(s.header);
    if (!s.traffic.is_null()) out.run_info["traffic"].push_back(s.traffic);
    if (!s.testbed.is_null()) out.run_info["testbed"] = s.testbed;
    if (!s.localize.is_null()) out.run_info["localize"].push_back(s.localize);
    if (!s.connections.is_null()) out.run_info["connections"].push_back(s.connections);
    if (!s.compute_faults.is_null()) {
      // Each rank's events, on rank 0's clock as its ops are.
      for (json e : s.compute_faults["events"]) {
        const int rank = static_cast<int>(record::IntField(e, "rank", 0));
        e["at_ns"] = record::IntField(e, "at_ns", 0) + offset(rank);
        out.run_info["compute_faults"].push_back(std::move(e));
      }
    }
  }
  for (const auto& [rank, ns] : applied) {
    out.clock_offsets_ns[std::to_string(rank)] = ns;
  }
  return out;
}

}  // namespace genie::report
