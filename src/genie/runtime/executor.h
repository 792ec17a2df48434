// Executor: walks one rank's Chakra graph under ASTRA-sim's issue rules and hands compute and
// communication to a Backend. It reads no clock and opens no socket, so the same code drives a
// simulated rank (SimBackend) and a real one (RealBackend).
//
// Issue rules (REFERENCE §2): a node is ready when its counted dependencies are done (the
// RankGraph decides which count); ready nodes are considered in ascending id order and issue
// when their resource is free — at most one CPU op, one GPU compute op, one GPU communication
// op (COMM_COLL or COMM_SEND) and one memory op in flight; COMM_RECV, METADATA and INVALID are
// exempt. A busy resource does not block later ready nodes of other kinds. Optionally
// (ExecutorConfig::CommStreams::kConcurrent) communication ops run as soon as they are ready.
//
// Tags: collectives use bits 48..61 for a hash of the group's members and 32..47 for the
// group's collective sequence number; bit 62 is left to the caller (e.g. iteration barriers);
// bit 63 marks point-to-point SEND/RECV.
//
// Compute faults (ExecutorConfig::compute_faults, compute/faulted_compute.h): a GPU compute op
// takes the trace's time times the faults' factor for its iteration; a stall holds the whole
// rank (nothing issues) for its length at the iteration's start. CPU ops are the host's and
// replay as traced. Warm-up iterations run without faults.
//
// Issue order (SetIssueOrder, predictions only): each group's collectives issue in a given order
// — a measured iteration's — however the simulated timing orders their readiness.
//
// Compute durations (SetComputeDurations, predictions only): listed GPU compute ops take the
// given time instead of the trace's (and no compute fault applies to them) — a measured
// iteration's, so that attribution can ask what the step would have been with the compute the
// ranks really had (driver/attribution_inputs.h).
//
// Lifetime: owned by whoever drives the rank (simulate/run command); borrows graph, config,
// backend and recorder, which must outlive it. Single-threaded: all calls and callbacks on the
// backend's loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/collective/buffer_layout.h"
#include "genie/common/status.h"
#include "genie/compute/compute_model.h"
#include "genie/compute/faulted_compute.h"
#include "genie/record/recorder.h"
#include "genie/runtime/backend.h"
#include "genie/runtime/collective_runner.h"
#include "genie/runtime/executor_config.h"
#include "genie/runtime/plan_memo.h"
#include "genie/workload/rank_graph.h"

namespace genie::runtime {

// Per comm group: the node ids of its collectives in the order one rank issued them in one
// iteration (record::OpEvent starts). Ids not listed issue as the rules alone say.
using IssueOrder = std::map<int64_t, std::vector<NodeId>>;

class Executor {
 public:
  Executor(workload::RankGraph& graph, const ExecutorConfig& config, Backend& backend,
           record::Recorder* recorder);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs the whole graph once (iteration `iteration`); `done` gets OK or the first error.
  void Start(int iteration, std::function<void(const Status&)> done);
  // From the next Start() on, a listed collective waits until those before it in its group's
  // list have issued. Why: one TCP connection per pair of ranks serves their messages in the
  // order they were posted, so two ranks that issue a group's concurrent collectives in
  // different orders wait on each other's queues (measured on a leaf-spine llama_dp2_tp2_sp2:
  // a 7.6 MB all-reduce whose pair issued it on either side of a 32 MB one ended 4 s later
  // than in the pairs that agreed). A prediction replays the order the run had, which is the
  // hosts' timing, not the network's. `order` (null: none) is copied.
  void SetIssueOrder(const IssueOrder* order);
  // From the next Start() on, a listed GPU compute op takes the duration given here (ns)
  // instead of the compute model's under the faults. `durations` (null: none) is copied.
  void SetComputeDurations(const std::map<NodeId, TimeNs>* durations);

  bool finished() const { return finished_; }
  const Status& status() const { return status_; }
  // One line per op still in flight or ready, for deadlock and timeout reports.
  std::string DescribePending() const;
  // This iteration's summary (valid once finished).
  const record::RankSummary& summary() const { return summary_; }
  // When an op last started or finished (backend time); a watchdog compares it with now.
  TimeNs last_progress() const { return last_progress_; }
  // When the last timed op in flight here (compute, memory) is due to end; 0 if none. Until
  // then the rank is busy by design, not stuck.
  TimeNs busy_until() const;
  // --verify: collectives whose final buffers were checked, and those too odd-sized to check.
  // Compute faults: when each took effect on this rank (in order), then those that never did
  // (the last measured iteration started so far counts as the run's last).
  std::vector<compute::ComputeFaultEvent> ComputeFaultEvents() const;
  uint64_t verified() const { return verified_; }
  uint64_t unverifiable() const { return unverifiable_; }

 private:
  enum class Resource : uint8_t { kNone, kCpu, kGpuCompute, kGpuComm, kMemory };
  struct InFlight {
    Op op;
    TimeNs start = 0;
    TimeNs end_target = 0;  // compute ops: when they are due to end
    Resource resource = Resource::kNone;
    std::unique_ptr<CollectiveRunner> runner;
    std::string algorithm;
    int group_size = 0;
    // --verify: the working buffer with real data and what it must hold at the end.
    std::vector<uint8_t> buffer;
    std::vector<collective::Region> expected;
  };

  void Pump();
  bool TryIssue(const Op& op);
  Resource ResourceFor(const Op& op) const;
  Status IssueCollective(InFlight& f);
  Status IssueP2p(InFlight& f);
  // --verify: grows f's buffer to `bytes`, or refuses (naming the collective, what it needs
  // and what the machine has) when the memory is not there.
  Status ReserveVerifyBuffer(InFlight& f, Bytes bytes, Bytes largest_receive);
  void Finish(NodeId id, Bytes sent = 0, Bytes received = 0);
  void Fail(Status status);
  Status Verify(const InFlight& f) const;
  // "rank R, node N (name, all_reduce of 1 MiB)" for messages.
  std::string Describe(const Op& op) const;
  Result<std::vector<int>> GroupMembers(const Op& op) const;
  Status IndexCommunication();
  uint64_t CollectiveTag(const Op& op, const std::vector<int>& members) const;
  uint64_t P2pTag(const Op& op) const;

  workload::RankGraph& graph_;
  const ExecutorConfig& config_;
  Backend& backend_;
  record::Recorder* recorder_;
  compute::ComputeModel compute_;
  int rank_;
  std::unique_ptr<compute::FaultedCompute> faults_;  // null: no compute fault names this rank
  int fault_iteration_ = 0;       // the measured iteration running (from 1); 0: none, warm-up
  int last_fault_iteration_ = 0;  // the last one started
  std::vector<compute::ComputeFaultEvent> fault_events_;
  TimeNs compute_excess_ns_ = 0;
  TimeNs cpu_wait_at_start_ = 0;  // config_.cpu_wait_clock when the iteration started
  // config_.tcp_timeouts_counter when the iteration started (-1: not read yet).
  int64_t tcp_timeouts_at_start_ = -1;
  // config_.probe_rtt_counter when the iteration started (episodes -1: not read yet).
  record::ProbeRttReading probe_rtt_at_start_{-1, 0, -1};
  bool stalled_ = false;     // in a stall at the iteration's start: nothing issues
  TimeNs stall_until_ = 0;

  int iteration_ = 0;
  std::function<void(const Status&)> done_;
  bool finished_ = false;
  bool pumping_ = false;
  bool pump_again_ = false;
  Status status_;
  std::map<NodeId, Op> ready_ops_;  // decoded ready nodes, not yet issued
  std::map<NodeId, std::unique_ptr<InFlight>> in_flight_;
  // --verify buffers of finished collectives, reused: a fresh multi-MiB buffer per collective
  // costs page faults that would show up in the measured times.
  std::vector<std::vector<uint8_t>> spare_buffers_;
  PlanMemo plans_;                 // real ranks: the collectives planned so far
  int busy_[5] = {0, 0, 0, 0, 0};  // per Resource
  // Messages of two ranks' corresponding operations must carry the same tag however the ranks'
  // timing orders their issue, so an operation's sequence number is its position in program
  // (node id) order among the rank's operations with the same key — the group for collectives,
  // (kind, peer, tag) for SEND/RECV — as NCCL matches operations on a communicator. Each
  // iteration continues the numbering.
  struct Ordinal {
    uint32_t index = 0;          // position among the key's operations
    uint32_t per_iteration = 0;  // how many operations the key has per iteration
    // All-reduces alone, likewise: ASTRA-sim's doubleBinaryTree alternates its trees over
    // them (PlanOptions::tree_stream).
    uint32_t all_reduce_index = 0;
    uint32_t all_reduces_per_iteration = 0;
  };
  std::map<NodeId, Ordinal> ordinal_;
  // SetIssueOrder: each listed node's (group, position), and per group the next position due.
  std::map<NodeId, std::pair<int64_t, size_t>> issue_position_;
  std::map<int64_t, size_t> issue_next_;
  std::map<NodeId, TimeNs> compute_durations_;  // SetComputeDurations
  bool indexed_ = false;
  uint32_t starts_ = 0;  // Start() calls so far (iterations run, warm-up included)
  record::RankSummary summary_;
  TimeNs compute_ns_ = 0;
  TimeNs comm_busy_since_ = -1;
  int comm_in_flight_ = 0;
  TimeNs comm_ns_ = 0;
  TimeNs last_progress_ = 0;
  TimeNs ready_time_ = 0;  // when the nodes being issued now became ready
  uint64_t verified_ = 0;
  uint64_t unverifiable_ = 0;
};

}  // namespace genie::runtime
