#include "genie/report/streamed_outputs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "genie/record/event_json.h"
#include "genie/report/atomic_file.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/completeness.h"
#include "genie/report/external_sort.h"
#include "genie/report/results_json.h"
#include "genie/report/statistics.h"

namespace genie::report {

using nlohmann::json;

namespace {

// The orders of results_json.cc (ResultsOrder) and chrome_trace.cc (ChromeTraceOrder), as keys.
struct ResultsKey {
  int iteration, rank;
  NodeId node;
  TimeNs start;
  bool operator<(const ResultsKey& o) const {
    return std::tie(iteration, rank, node, start) < std::tie(o.iteration, o.rank, o.node, o.start);
  }
};
struct TraceKey {
  int rank, track;
  TimeNs start, end;
  int iteration;
  NodeId node;
  bool operator<(const TraceKey& o) const {
    return std::tie(rank, track, start, end, iteration, node) <
           std::tie(o.rank, o.track, o.start, o.end, o.iteration, o.node);
  }
};

// `v` pretty-printed as nlohmann's dump(1) prints it `depth` levels down: every line but the
// first moved right by `depth` spaces (JSON strings hold no raw newline).
std::string Nested(const json& v, int depth) {
  const std::string text = v.dump(1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.append(static_cast<size_t>(depth), ' ');
  }
  return out;
}

Result<record::OpEvent> ParseOp(const json& j, const std::string& where) {
  return record::OpEventFromJson(j, where, "the stream is damaged; rerun to write it again");
}

}  // namespace

Result<StreamedOutputsStats> WriteStreamedOutputs(const std::string& stream_path,
                                                  const json& run_info,
                                                  const std::vector<record::RankSummary>& ranks,
                                                  const StreamedOutputs& out) {
  namespace fs = std::filesystem;
  StreamedOutputsStats stats;
  std::ifstream in(stream_path, std::ios::binary);
  if (!in) {
    return Status::IoError("cannot read the results stream " + stream_path +
                           " (it is written during the run; was it removed?)");
  }
  std::string scratch = out.scratch_dir;
  if (scratch.empty()) {
    scratch = fs::path(out.results_path.empty() ? out.trace_path : out.results_path)
                  .parent_path()
                  .string();
  }
  if (scratch.empty()) scratch = ".";
  const std::string tag = fmt::format("{}", getpid());
  const bool want_results = !out.results_path.empty(), want_trace = !out.trace_path.empty();
  const size_t each = want_results && want_trace ? out.memory_bytes / 2 : out.memory_bytes;
  ExternalSorter<ResultsKey> by_result(scratch + "/.results.sort-" + tag, each);
  ExternalSorter<TraceKey> by_trace(scratch + "/.trace.sort-" + tag, each);
  TypeTableAccumulator types;
  std::map<int, std::pair<int, int>> iterations_of;  // rank -> lowest, highest iteration

  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (in.peek() == std::char_traits<char>::eof()) {
        stats.truncated = true;  // the run was stopped mid-line
        break;
      }
      return Status::InvalidArgument(
          fmt::format("{}: line {} is not JSON; the stream is damaged", stream_path, number));
    }
    auto kind = j.find("record");
    if (kind == j.end() || !kind->is_string() || *kind != "op") continue;
    GENIE_ASSIGN_OR_RETURN(record::OpEvent e,
                           ParseOp(j, fmt::format("{}: line {}", stream_path, number)));
    ++stats.ops;
    types.Add(e);
    auto [it, fresh] = iterations_of.try_emplace(e.rank, e.iteration, e.iteration);
    if (!fresh) {
      it->second.first = std::min(it->second.first, e.iteration);
      it->second.second = std::max(it->second.second, e.iteration);
    }
    if (want_results && e.is_comm()) {
      GENIE_RETURN_IF_ERROR(by_result.Add({e.iteration, e.rank, e.node, e.start}, line));
    }
    if (want_trace) {
      if (auto track = ChromeTraceTrack(e)) {
        GENIE_RETURN_IF_ERROR(
            by_trace.Add({e.rank, *track, e.start, e.end, e.iteration, e.node}, line));
      }
    }
  }

  auto parse = [&](std::string_view text) -> Result<record::OpEvent> {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) return Status::Internal("a sorted op record does not parse back");
    return ParseOp(j, stream_path);
  };

  if (want_results) {
    // Completeness needs only which ranks and iterations have ops: two stand-ins per rank.
    std::vector<record::OpEvent> seen;
    for (const auto& [rank, lohi] : iterations_of) {
      record::OpEvent a;
      a.rank = rank;
      a.iteration = lohi.first;
      seen.push_back(a);
      a.iteration = lohi.second;
      seen.push_back(a);
    }
    json doc = ResultsJsonWithoutCollectives(
        run_info, types.Rows(), CheckCompleteness(run_info, seen, ranks, stats.truncated), ranks,
        json::object());
    doc["collectives"] = nullptr;  // its place among the keys; streamed below
    GENIE_ASSIGN_OR_RETURN(auto file, AtomicFileWriter::Open(out.results_path));
    GENIE_RETURN_IF_ERROR(file->Append("{\n"));
    bool first = true;
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      GENIE_RETURN_IF_ERROR(file->Append(first ? " " : ",\n "));
      first = false;
      GENIE_RETURN_IF_ERROR(file->Append(json(it.key()).dump() + ": "));
      if (it.key() != "collectives") {
        GENIE_RETURN_IF_ERROR(file->Append(Nested(it.value(), 1)));
        continue;
      }
      bool any = false;
      GENIE_RETURN_IF_ERROR(by_result.Finish([&](const ResultsKey&, std::string_view text) {
        GENIE_ASSIGN_OR_RETURN(record::OpEvent e, parse(text));
        GENIE_RETURN_IF_ERROR(file->Append(any ? ",\n  " : "[\n  "));
        any = true;
        return file->Append(Nested(CollectiveEntry(e), 2));
      }));
      GENIE_RETURN_IF_ERROR(file->Append(any ? "\n ]" : "[]"));
    }
    GENIE_RETURN_IF_ERROR(file->Append("\n}\n"));
    GENIE_RETURN_IF_ERROR(file->Commit());
    stats.spilled_runs += by_result.runs();
  }

  if (want_trace) {
    GENIE_ASSIGN_OR_RETURN(auto file, AtomicFileWriter::Open(out.trace_path));
    GENIE_RETURN_IF_ERROR(file->Append("{\"traceEvents\":[\n"));
    bool any = false;
    Status written;
    ChromeTraceEvents events([&](json event) {
      if (!written.ok()) return;
      written = file->Append(any ? ",\n" : "");
      any = true;
      if (written.ok()) {
        written = file->Append(event.dump(-1, ' ', false, json::error_handler_t::replace));
      }
    });
    GENIE_RETURN_IF_ERROR(by_trace.Finish([&](const TraceKey&, std::string_view text) {
      GENIE_ASSIGN_OR_RETURN(record::OpEvent e, parse(text));
      events.Add(e);
      return written;
    }));
    GENIE_RETURN_IF_ERROR(file->Append(any ? "\n]}\n" : "]}\n"));
    GENIE_RETURN_IF_ERROR(file->Commit().WithContext("Chrome trace"));
    stats.spilled_runs += by_trace.runs();
  }
  return stats;
}

}  // namespace genie::report
