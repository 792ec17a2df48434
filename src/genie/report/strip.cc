#include "genie/report/strip.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "genie/record/json_check.h"
#include "genie/report/atomic_file.h"
#include "genie/report/chrome_trace.h"

namespace genie::report {

using nlohmann::json;

const std::vector<std::string>& TimingKeys() {
  static const std::vector<std::string> kKeys = {
      "start",       "end",          "finish",        "ts",           "dur",
      "duration_ns", "compute_ns",   "comm_ns",       "exposed_comm_ns", "step_time_ns",
      "total_time_ns", "mean_time_ns", "algbw_gbps",  "busbw_gbps",   "time",
      "hostname",    "command_line",  "merged_files",  "job_id",       "launcher",
      "clock_offsets_ns", "startup",  "peak_rss_bytes", "cpu_steal",  // per-rank figures (traffic)
      "cpu_wait_ns", "cpu_bound", "cpu_wait_max_fraction",  // waits for a core (cpu_bound.h)
      "tcp_timeouts", "host_id",  // the hosts' TCP (record/tcp_timeouts.h)
      "probe_rtt_episodes", "probe_rtt_ns", "probe_rtt_at_ns",  // bbr's PROBE_RTT
  };
  return kKeys;
}

namespace {

void StripInPlace(json& j) {
  static const std::set<std::string> kKeys(TimingKeys().begin(), TimingKeys().end());
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end();) {
      if (kKeys.count(it.key()) != 0) {
        it = j.erase(it);
        continue;
      }
      if (it.key() != "configs" && it.key() != "transport") StripInPlace(it.value());
      ++it;
    }
  } else if (j.is_array()) {
    for (auto& v : j) StripInPlace(v);
  }
}

// Lanes of a Chrome trace track depend on which ops overlapped; fold them into the track.
void CanonicalTrace(json& doc) {
  json events = json::array();
  std::set<std::string> seen;
  for (json& e : doc["traceEvents"]) {
    if (e.contains("tid") && e["tid"].is_number_integer()) {
      int tid = e["tid"].get<int>();
      bool extra_lane = tid % kLaneStride != 0;
      std::string name = record::StringField(e, "name");
      if (extra_lane && record::StringField(e, "ph") == "M" &&
          (name == "thread_name" || name == "thread_sort_index")) {
        continue;
      }
      e["tid"] = tid / kLaneStride * kLaneStride;
    }
    events.push_back(std::move(e));
  }
  std::vector<std::string> lines;
  for (const json& e : events) lines.push_back(e.dump());
  std::sort(lines.begin(), lines.end());
  json sorted = json::array();
  for (const auto& l : lines) sorted.push_back(json::parse(l));
  doc["traceEvents"] = std::move(sorted);
}

}  // namespace

json StripTimings(const json& doc) {
  json out = doc;
  StripInPlace(out);
  if (out.is_object() && out.contains("traceEvents") && out["traceEvents"].is_array()) {
    CanonicalTrace(out);
  }
  return out;
}

Result<std::string> StripFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    return Status::IoError(fmt::format("reading {} failed: {}", path, std::strerror(errno)));
  }
  return StripText(ss.str(), path);
}

Result<std::string> StripText(std::string_view text, const std::string& path) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Status::Corruption(fmt::format("{} is empty; strip reads results JSON, Chrome traces "
                                          "and genie's JSON-lines streams",
                                          path));
  }

  // Nesting is bounded before anything recurses over the tree (copy, strip, dump); a text too
  // deep as a whole may still be JSON lines, whose lines are checked one by one.
  json whole = record::JsonNestingDepth(text) <= record::kMaxJsonDepth
                   ? json::parse(text, nullptr, /*allow_exceptions=*/false)
                   : json(json::value_t::discarded);
  if (!whole.is_discarded() && !(whole.is_object() && whole.contains("record"))) {
    return StripTimings(whole).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
  }
  // JSON lines: header first, then every other record in a canonical order.
  std::vector<std::string> header, records;
  std::istringstream lines{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (record::JsonNestingDepth(line) > record::kMaxJsonDepth) {
      return Status::Corruption(fmt::format(
          "{}: line {} nests more than {} levels deep; genie's results files nest a few levels, "
          "so this is not one of them (strip reads results JSON, Chrome traces and genie's "
          "JSON-lines streams)",
          path, line_no, record::kMaxJsonDepth));
    }
    json j = json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      if (lines.peek() == EOF) break;  // truncated last line: the run stopped mid-write
      return Status::Corruption(fmt::format(
          "{}: line {} is not JSON; strip reads results JSON, Chrome traces and genie's JSON-lines "
          "streams", path, line_no));
    }
    std::string s = StripTimings(j).dump(-1, ' ', false, json::error_handler_t::replace);
    (record::StringField(j, "record") == "header" ? header : records).push_back(s);
  }
  if (header.empty() && records.empty()) {
    return Status::Corruption(fmt::format(
        "{} holds no whole JSON value or record (truncated or damaged?); strip reads results "
        "JSON, Chrome traces and genie's JSON-lines streams",
        path));
  }
  std::sort(records.begin(), records.end());
  std::string out;
  for (const auto& s : header) out += s + "\n";
  for (const auto& s : records) out += s + "\n";
  return out;
}

Status WriteStripped(const std::string& out, const std::string& text) {
  bool valid = text.find_first_not_of(" \t\r\n") != std::string::npos;
  if (valid && !json::accept(text)) {
    std::istringstream lines(text);
    std::string line;
    while (valid && std::getline(lines, line)) valid = json::accept(line);
  }
  if (!valid) {
    return Status::Internal(fmt::format(
        "not writing {}: the stripped text is not JSON or JSON lines; the file is left as it "
        "was",
        out));
  }
  return WriteFileAtomically(out, text);
}

}  // namespace genie::report
