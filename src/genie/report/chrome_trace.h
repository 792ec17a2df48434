// Chrome trace of a run in the Trace Event Format, which Perfetto (ui.perfetto.dev) and
// chrome://tracing open: one process per rank (named "rank r"), and per rank one track
// (thread) each for GPU compute, CPU ops, communication (collectives and SENDs), RECVs (which
// ASTRA-sim lets overlap everything) and memory (MEM_LOAD/STORE). Ops that overlap on one track
// go to extra lanes ("recv #2") so no two slices on a thread ever overlap. Every event has ph,
// ts (µs, fractional), pid, tid and name; "X" events have dur; args carry node id, iteration and
// the communication fields. METADATA and INVALID nodes take no time and are left out.
// Pure apart from the file write; any thread.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/record/op_event.h"

namespace genie::report {

// Tracks; a lane's tid is track * kLaneStride + lane (lane 0 first).
enum class TraceTrack : int { kCompute = 1, kCpu = 2, kComm = 3, kRecv = 4, kMemory = 5 };
inline constexpr int kLaneStride = 100;

// The trace's events one op at a time, for a writer that streams them (streamed_outputs.h):
// ops must come in ChromeTraceOrder (rank, track, start, end, iteration, node); each event
// (metadata and slices, as BuildChromeTrace lists them) goes to `emit`. Ops without a track
// (METADATA, INVALID) are skipped.
std::optional<int> ChromeTraceTrack(const record::OpEvent& e);  // TraceTrack, or none
bool ChromeTraceOrder(const record::OpEvent& a, const record::OpEvent& b);
class ChromeTraceEvents {
 public:
  explicit ChromeTraceEvents(std::function<void(nlohmann::json)> emit) : emit_(std::move(emit)) {}
  void Add(const record::OpEvent& e);

 private:
  std::function<void(nlohmann::json)> emit_;
  bool started_ = false;
  int rank_ = 0, track_ = 0;
  std::vector<TimeNs> lane_end_;  // per lane of the current (rank, track)
};

nlohmann::json BuildChromeTrace(const std::vector<record::OpEvent>& events);
Status WriteChromeTrace(const std::string& path, const std::vector<record::OpEvent>& events);

}  // namespace genie::report
