#include "genie/report/results_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "genie/record/event_json.h"
#include "genie/record/record_stream.h"
#include "genie/report/results_json.h"

namespace genie::report {

using nlohmann::json;

namespace {

Result<RunRecords> FromResultsJson(const json& doc, const std::string& path) {
  RunRecords r;
  r.run_info = doc.value("provenance", json());
  r.clock_offsets_ns = doc.value("clock_offsets_ns", json::object());
  size_t i = 0;
  for (const json& c : doc.value("collectives", json::array())) {
    auto e = record::OpEventFromJson(c);
    if (!e.ok()) return e.status().WithContext(fmt::format("{}: collectives[{}]", path, i));
    r.ops.push_back(std::move(*e));
    ++i;
  }
  for (const json& rank : doc.value("ranks", json::array())) {
    for (const json& it : rank.value("iterations", json::array())) {
      auto s = record::RankSummaryFromJson(it);
      if (!s.ok()) return s.status().WithContext(fmt::format("{}: ranks", path));
      r.ranks.push_back(*s);
    }
  }
  return r;
}

}  // namespace

Result<RunRecords> LoadResults(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open results file {}", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  json whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded() && whole.is_object() && !whole.contains("record")) {
    if (whole.value("format", "") != kResultsFormat) {
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
  for (const std::string& path : paths) {
    GENIE_ASSIGN_OR_RETURN(record::RecordStream s, record::ReadRecordStream(path));
    const std::string id = s.clock.is_object() ? s.clock.value("run_id", "") : "";
    if (!id.empty() && !run_id.empty() && id != run_id) {
      return Status::InvalidArgument(fmt::format(
          "{} is from another run than {} (run id {} vs {}); merge the streams of one run", path,
          run_id_file, id, run_id));
    }
    if (!id.empty() && run_id.empty()) {
      run_id = id;
      run_id_file = path;
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
    if (!s.clock.is_object() || !s.clock.contains("offset_ns")) continue;
    const std::string host = s.clock.value("host_id", "");
    const Estimate e{s.clock.value("rtt_ns", TimeNs{0}), s.clock.value("offset_ns", TimeNs{0})};
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
    const bool recorded = s.clock.is_object() && s.clock.contains("offset_ns");
    const std::string host = recorded ? s.clock.value("host_id", "") : "";
    const TimeNs measured = !recorded      ? 0
                            : host.empty() ? s.clock.value("offset_ns", TimeNs{0})
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
    out.run_info["merged_files"].push_back(std::filesystem::path(paths[i]).filename().string());
    out.run_info["headers"].push_back(s.header);
    if (!s.traffic.is_null()) out.run_info["traffic"].push_back(s.traffic);
  }
  for (const auto& [rank, ns] : applied) {
    out.clock_offsets_ns[std::to_string(rank)] = ns;
  }
  return out;
}

}  // namespace genie::report
