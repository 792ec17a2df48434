#include "genie/report/chrome_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "genie/record/names.h"
#include "genie/report/atomic_file.h"
#include "genie/report/bandwidth.h"
#include "genie/report/statistics.h"

namespace genie::report {

using nlohmann::json;

namespace {

std::optional<TraceTrack> TrackOf(const record::OpEvent& e) {
  switch (e.kind) {
    case OpKind::kCompute:
      return e.is_cpu_op ? TraceTrack::kCpu : TraceTrack::kCompute;
    case OpKind::kCollective:
    case OpKind::kSend:
      return TraceTrack::kComm;
    case OpKind::kRecv:
      return TraceTrack::kRecv;
    case OpKind::kMemLoad:
    case OpKind::kMemStore:
      return TraceTrack::kMemory;
    default:
      return std::nullopt;
  }
}

const char* TrackName(TraceTrack t) {
  switch (t) {
    case TraceTrack::kCompute: return "GPU compute";
    case TraceTrack::kCpu: return "CPU";
    case TraceTrack::kComm: return "communication";
    case TraceTrack::kRecv: return "recv";
    case TraceTrack::kMemory: return "memory";
  }
  return "?";
}

double Us(TimeNs ns) { return static_cast<double>(ns) / 1000.0; }

json Meta(const char* name, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0},
          {"args", std::move(args)}};
}

}  // namespace

std::optional<int> ChromeTraceTrack(const record::OpEvent& e) {
  auto t = TrackOf(e);
  if (!t) return std::nullopt;
  return static_cast<int>(*t);
}

bool ChromeTraceOrder(const record::OpEvent& a, const record::OpEvent& b) {
  const int ta = ChromeTraceTrack(a).value_or(0), tb = ChromeTraceTrack(b).value_or(0);
  return std::tie(a.rank, ta, a.start, a.end, a.iteration, a.node) <
         std::tie(b.rank, tb, b.start, b.end, b.iteration, b.node);
}

void ChromeTraceEvents::Add(const record::OpEvent& op) {
  const std::optional<int> t = ChromeTraceTrack(op);
  if (!t) return;
  const record::OpEvent* e = &op;
  const int rank = e->rank, track = *t;
  if (!started_ || rank != rank_ || track != track_) {
    // A new (rank, track): its lanes start empty; a new rank names its process first.
    if (!started_ || rank != rank_) {
      emit_(Meta("process_name", rank, 0, {{"name", fmt::format("rank {}", rank)}}));
      emit_(Meta("process_sort_index", rank, 0, {{"sort_index", rank}}));
    }
    started_ = true;
    rank_ = rank;
    track_ = track;
    lane_end_.clear();
  }
  // Each op goes on the first lane already free at its start.
  size_t lane = 0;
  while (lane < lane_end_.size() && lane_end_[lane] > e->start) ++lane;
  if (lane == lane_end_.size()) {
    lane_end_.push_back(e->end);
    int tid = track * kLaneStride + static_cast<int>(lane);
    std::string tname =
        lane == 0 ? TrackName(static_cast<TraceTrack>(track))
                  : fmt::format("{} #{}", TrackName(static_cast<TraceTrack>(track)), lane + 1);
    emit_(Meta("thread_name", rank, tid, {{"name", tname}}));
    emit_(Meta("thread_sort_index", rank, tid, {{"sort_index", tid}}));
  }
  lane_end_[lane] = std::max(e->end, e->start);
  json args = {{"node", e->node}, {"iteration", e->iteration}};
  if (e->is_comm()) {
    args["size"] = e->size;
    args["group"] = e->group;
    args["group_size"] = e->group_size;
    if (!e->algorithm.empty()) args["algorithm"] = e->algorithm;
    if (e->peer >= 0) args["peer"] = e->peer;
    args["bytes_sent"] = e->bytes_sent;
    args["bytes_received"] = e->bytes_received;
    args["algbw_gbps"] = AlgBw(*e);
    args["busbw_gbps"] = BusBw(*e);
  }
  std::string name = e->name;
  if (name.empty()) {
    name = e->is_comm() ? fmt::format("{} {}", CommTypeName(*e), e->node)
                        : fmt::format("node {}", e->node);
  }
  std::string cat = e->kind == OpKind::kCollective ? CommTypeName(*e) : record::KindName(e->kind);
  emit_({{"ph", "X"},
         {"name", std::move(name)},
         {"cat", std::move(cat)},
         {"pid", rank},
         {"tid", track * kLaneStride + static_cast<int>(lane)},
         {"ts", Us(e->start)},
         {"dur", Us(std::max<TimeNs>(0, e->duration()))},
         {"args", std::move(args)}});
}

json BuildChromeTrace(const std::vector<record::OpEvent>& events) {
  std::vector<const record::OpEvent*> sorted;
  for (const auto& e : events) {
    if (ChromeTraceTrack(e)) sorted.push_back(&e);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return ChromeTraceOrder(*a, *b); });
  json out = json::array();
  ChromeTraceEvents trace([&out](json event) { out.push_back(std::move(event)); });
  for (const record::OpEvent* e : sorted) trace.Add(*e);
  // No "displayTimeUnit": some Perfetto versions take it as the unit of ts, not of display.
  return {{"traceEvents", std::move(out)}};
}

Status WriteChromeTrace(const std::string& path, const std::vector<record::OpEvent>& events) {
  json doc = BuildChromeTrace(events);
  // One event per line: large traces stay greppable and diffable.
  std::string text = "{\"traceEvents\":[\n";
  const json& list = doc["traceEvents"];
  for (size_t i = 0; i < list.size(); ++i) {
    text += list[i].dump(-1, ' ', false, json::error_handler_t::replace);
    text += i + 1 < list.size() ? ",\n" : "\n";
  }
  text += "]}\n";
  return WriteFileAtomically(path, text).WithContext("Chrome trace");
}

}  // namespace genie::report
