// ExecutorConfig: everything the Executor needs besides the trace and the backend, already
// resolved from system.json / memory.json / command-line flags (runtime/run_setup builds it).
// Shared read-only by every rank's Executor; any thread may read it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/compute/compute_fault.h"
#include "genie/compute/compute_model.h"
#include "genie/config/memory_config.h"
#include "genie/record/rank_summary.h"
#include "genie/runtime/collective_runner.h"
#include "genie/spec/custom_algorithm.h"
#include "genie/trace/comm_groups.h"

namespace genie::runtime {

class RemoteMemory;

struct CollectiveChoice {
  std::vector<collective::Algorithm> algorithms = {collective::Algorithm::kRing};  // per dim
  int direct_window = 0;
  // *-implementation-custom: loaded once by PrepareRun, shared by every rank's Executor.
  std::shared_ptr<const spec::CustomAlgorithm> custom;
};


struct ExecutorConfig {
  int world_size = 0;
  compute::ComputeParams compute;
  // Compute faults of a --faults schedule (null: none), shared by every rank; and the measured
  // iteration (from 1) that Executor::Start's iteration 0 stands for — a prediction of measured
  // iteration k simulates one iteration with k here; 0 there applies none.
  std::shared_ptr<const compute::ComputeFaultSchedule> compute_faults;
  int fault_iteration_base = 1;
  LocalCosts costs;
  // MEM_LOAD / MEM_STORE cost model (memory.json); none given = such nodes take no time.
  std::optional<config::MemoryConfig> memory;
  // The queues `memory` describes, shared by every rank (simulate builds one; not owned).
  // Null = every access starts at once on its rank (PER_NPU_MEMORY_EXPANSION's behaviour).
  RemoteMemory* remote_memory = nullptr;
  std::map<CollectiveType, CollectiveChoice> implementations;  // missing type -> ring
  // Chunks, active chunks, channels, slice, topology dims and optimisation; algorithms and
  // the custom algorithm are filled per collective from `implementations`.
  collective::PlanOptions plan;
  collective::SchedulingPolicy policy = collective::SchedulingPolicy::kLifo;
  trace::CommGroups groups;      // from the comm-group file; METADATA groups are per rank
  bool verify = false;            // move real data and check every collective's result
  // How many communication ops a rank runs at once.
  //  kOnePerRank: ASTRA-sim's rule, one COMM_COLL or COMM_SEND in flight per rank.
  //  kConcurrent: every ready COMM_COLL / COMM_SEND starts at once (many NCCL streams).
  //    A real run needs it: with real timing, two members of a group can find different
  //    collectives ready first, and with one op in flight each would wait for the other forever
  //    (seen on the shipped STG traces, whose node ids are not in program order). Messages
  //    still match because tags number each group's collectives in node id order.
  enum class CommStreams { kOnePerRank, kConcurrent };
  CommStreams comm_streams = CommStreams::kOnePerRank;
  // Real runs: the rank's thread's time spent waiting for a core so far (record/cpu_wait.h),
  // read when an iteration starts and ends (RankSummary::cpu_wait_ns). Null in simulation.
  std::function<TimeNs()> cpu_wait_clock;
  // Real runs: the retransmission timeouts this rank's host counted so far
  // (record/tcp_timeouts.h), read before the first iteration and when each ends
  // (RankSummary::tcp_timeouts: those since the one before ended), and its network namespace
  // (RankSummary::host_id). Null in simulation.
  std::function<int64_t()> tcp_timeouts_counter;
  int64_t host_id = 0;
  // Real runs over TCP with bbr: bbr's PROBE_RTT episodes this rank's connections began so
  // far, the time they spent in them and when the latest began (net::Transport::probe_rtt, on
  // the backend's clock), read like the counter above (RankSummary::probe_rtt_*). Null in
  // simulation.
  std::function<record::ProbeRttReading()> probe_rtt_counter;
};

}  // namespace genie::runtime
