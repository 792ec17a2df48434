#include "genie/report/streamed_outputs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstring>
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

// The sorts carry each op in a compact binary form, so that it is parsed from JSON once (when
// the stream is read), not again for every output. Fixed fields, then the two strings and the
// phases, each with its length.
struct Fixed {
  int64_t group, start, end;
  uint64_t node, size, bytes_sent, bytes_received;
  int32_t rank, iteration, group_size, peer;
  uint32_t name_len, algorithm_len, phases;
  uint8_t kind, coll_type, is_cpu_op;
};

template <typename T>
void Put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void Encode(const record::OpEvent& e, std::string* out) {
  out->clear();
  Fixed f{};
  f.group = e.group;
  f.start = e.start;
  f.end = e.end;
  f.node = e.node;
  f.size = e.size;
  f.bytes_sent = e.bytes_sent;
  f.bytes_received = e.bytes_received;
  f.rank = e.rank;
  f.iteration = e.iteration;
  f.group_size = e.group_size;
  f.peer = e.peer;
  f.name_len = static_cast<uint32_t>(e.name.size());
  f.algorithm_len = static_cast<uint32_t>(e.algorithm.size());
  f.phases = static_cast<uint32_t>(e.phases.size());
  f.kind = static_cast<uint8_t>(e.kind);
  f.coll_type = static_cast<uint8_t>(e.coll_type);
  f.is_cpu_op = e.is_cpu_op ? 1 : 0;
  Put(out, f);
  out->append(e.name);
  out->append(e.algorithm);
  for (const record::PhaseSpan& p : e.phases) Put(out, p);
}

record::OpEvent Decode(std::string_view in) {
  Fixed f;
  std::memcpy(&f, in.data(), sizeof f);
  in.remove_prefix(sizeof f);
  record::OpEvent e;
  e.group = f.group;
  e.start = f.start;
  e.end = f.end;
  e.node = f.node;
  e.size = f.size;
  e.bytes_sent = f.bytes_sent;
  e.bytes_received = f.bytes_received;
  e.rank = f.rank;
  e.iteration = f.iteration;
  e.group_size = f.group_size;
  e.peer = f.peer;
  e.kind = static_cast<OpKind>(f.kind);
  e.coll_type = static_cast<CollectiveType>(f.coll_type);
  e.is_cpu_op = f.is_cpu_op != 0;
  e.name.assign(in.substr(0, f.name_len));
  in.remove_prefix(f.name_len);
  e.algorithm.assign(in.substr(0, f.algorithm_len));
  in.remove_prefix(f.algorithm_len);
  e.phases.resize(f.phases);
  for (record::PhaseSpan& p : e.phases) {
    std::memcpy(&p, in.data(), sizeof p);
    in.remove_prefix(sizeof p);
  }
  return e;
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

  std::string line, packed;
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
    Encode(e, &packed);
    if (want_results && e.is_comm()) {
      GENIE_RETURN_IF_ERROR(by_result.Add({e.iteration, e.rank, e.node, e.start}, packed));
    }
    if (want_trace) {
      if (auto track = ChromeTraceTrack(e)) {
        GENIE_RETURN_IF_ERROR(
            by_trace.Add({e.rank, *track, e.start, e.end, e.iteration, e.node}, packed));
      }
    }
  }

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
      const Status merged = by_result.Finish([&](const ResultsKey&, std::string_view text) {
        const record::OpEvent e = Decode(text);
        Status st = file->Append(any ? ",\n  " : "[\n  ");
        any = true;
        return st.ok() ? file->Append(Nested(CollectiveEntry(e), 2)) : st;
      });
      GENIE_RETURN_IF_ERROR(merged);
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
      events.Add(Decode(text));
      return written;
    }));
    GENIE_RETURN_IF_ERROR(file->Append(any ? "\n]}\n" : "]}\n"));
    GENIE_RETURN_IF_ERROR(file->Commit().WithContext("Chrome trace"));
    stats.spilled_runs += by_trace.runs();
  }
  return stats;
}

}  // namespace genie::report
