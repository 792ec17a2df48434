// WorkloadSummary: what `genie inspect` reports about a workload — per rank, nodes by type,
// collectives by type with sizes and bytes, point-to-point traffic and compute time; across
// ranks, whether it can run: every rank's trace reads and resolves, each comm group's members
// issue the same sequence of (collective type, size), every SEND has its RECV. Problems make a
// workload unrunnable; warnings (tolerated quirks) do not. Built by reading each rank in turn
// (one RankGraph open at a time). Main thread; the result is a plain value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/trace/workload_files.h"
#include "genie/workload/read_options.h"

namespace genie::workload {

// Names of cross-rank problems (see docs/traces.md).
inline constexpr const char* kProblemCollectiveMismatch = "collective-mismatch";
inline constexpr const char* kProblemNotInGroup = "not-in-group";
inline constexpr const char* kProblemUnknownGroup = "unknown-group";  // a warning: world used
inline constexpr const char* kProblemSendWithoutRecv = "send-without-recv";
inline constexpr const char* kProblemRecvWithoutSend = "recv-without-send";
inline constexpr const char* kProblemP2pSizeMismatch = "p2p-size-mismatch";
inline constexpr const char* kProblemBadPeer = "bad-peer";

struct CollectiveStats {
  uint64_t count = 0;
  Bytes total_bytes = 0;
  std::map<Bytes, uint64_t> sizes;  // comm_size -> how many
};

struct RankSummary {
  int rank = 0;
  std::string path;
  bool readable = false;                           // the trace opened and indexed
  uint64_t nodes = 0;
  std::map<std::string, uint64_t> nodes_by_type;   // "COMP_NODE", "COMM_COLL_NODE", ...
  std::map<std::string, CollectiveStats> collectives;  // "all_reduce", ... (real collectives)
  uint64_t cpu_collective_wrappers = 0;            // COMM_COLL run as CPU ops
  uint64_t sends = 0, recvs = 0;
  Bytes send_bytes = 0, recv_bytes = 0;
  TimeNs compute_ns = 0;                           // GPU compute (duration as written)
  TimeNs cpu_ns = 0;                               // CPU ops, wrappers included
  bool ctrl_deps_counted = false;
  std::vector<std::string> warnings;               // "[name] message", once per name
  std::vector<std::string> problems;               // this rank's errors
};

struct WorkloadSummary {
  trace::WorkloadFiles files;
  ReadOptions options;
  std::vector<RankSummary> ranks;
  std::map<int64_t, std::vector<int>> groups;  // groups used by collectives, resolved
  std::vector<std::string> problems;           // all problems: per rank, then cross-rank
  std::vector<std::string> warnings;           // all warnings, "rank N: [name] ..."
  bool runnable() const { return problems.empty(); }
};

// Reads every rank of the workload. An error only when the workload cannot be found (bad path,
// ambiguous folder, rank gap, unreadable comm-group file); everything else is a problem.
Result<WorkloadSummary> InspectWorkload(const trace::WorkloadFiles& files,
                                        const ReadOptions& options);

nlohmann::json ToJson(const WorkloadSummary& summary);
// Human-readable report; ranks with identical summaries are folded into ranges.
std::string FormatText(const WorkloadSummary& summary);

}  // namespace genie::workload
