#include "genie/runtime/executor.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <tuple>

#include "genie/collective/planner.h"
#include "genie/common/checked_math.h"
#include "genie/common/wire_limits.h"
#include "genie/runtime/collective_plan.h"
#include "genie/runtime/remote_memory.h"
#include "genie/runtime/verify_data.h"

namespace genie::runtime {
namespace {

constexpr uint64_t kP2pBit = 1ull << 63;

// FNV-1a over the member list: every member computes the same value for the same group.
uint64_t GroupHash(const std::vector<int>& members) {
  uint64_t h = 1469598103934665603ull;
  for (int r : members) {
    h ^= static_cast<uint64_t>(r) + 1;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

Executor::Executor(workload::RankGraph& graph, const ExecutorConfig& config, Backend& backend,
                   record::Recorder* recorder)
    : graph_(graph),
      config_(config),
      backend_(backend),
      recorder_(recorder),
      compute_(config.compute),
      rank_(backend.rank()) {
  if (config.compute_faults) {
    auto faults = std::make_unique<compute::FaultedCompute>(*config.compute_faults, rank_);
    if (!faults->empty()) faults_ = std::move(faults);
  }
}

Executor::~Executor() = default;

void Executor::Start(int iteration, std::function<void(const Status&)> done) {
  iteration_ = iteration;
  done_ = std::move(done);
  finished_ = false;
  status_ = Status::Ok();
  compute_ns_ = comm_ns_ = compute_excess_ns_ = 0;
  comm_in_flight_ = 0;
  summary_ = {};
  summary_.rank = rank_;
  summary_.iteration = iteration;
  // Once, before the clock: later iterations start from the reading the one before ended
  // with (/proc/net/netstat costs ~0.1 ms to read).
  if (config_.tcp_timeouts_counter && tcp_timeouts_at_start_ < 0) {
    tcp_timeouts_at_start_ = config_.tcp_timeouts_counter();
  }
  if (config_.probe_rtt_counter && probe_rtt_at_start_.episodes < 0) {
    probe_rtt_at_start_ = config_.probe_rtt_counter();
  }
  summary_.start = backend_.Now();
  if (config_.cpu_wait_clock) cpu_wait_at_start_ = config_.cpu_wait_clock();
  last_progress_ = summary_.start;
  ready_time_ = summary_.start;
  ++starts_;
  issue_next_.clear();
  if (!indexed_) {
    Status st = IndexCommunication();
    if (!st.ok()) {
      Fail(st);
      return;
    }
  }
  fault_iteration_ = faults_ && iteration >= 0 ? iteration + config_.fault_iteration_base : 0;
  if (fault_iteration_ >= 1) {
    faults_->Starting(fault_iteration_, summary_.start, &fault_events_);
    last_fault_iteration_ = fault_iteration_;
    summary_.stall_ns = faults_->Stall(fault_iteration_);
  }
  if (summary_.stall_ns > 0) {
    // Nothing issues until the stall is over; the first ops then count from its end.
    stalled_ = true;
    stall_until_ = SaturatingAdd(summary_.start, summary_.stall_ns);
    backend_.After(summary_.stall_ns, [this] {
      stalled_ = false;
      if (finished_) return;
      last_progress_ = ready_time_ = std::min(backend_.Now(), stall_until_);
      Pump();
    });
    return;
  }
  Pump();
}

std::vector<compute::ComputeFaultEvent> Executor::ComputeFaultEvents() const {
  std::vector<compute::ComputeFaultEvent> out = fault_events_;
  if (faults_) faults_->Unplayed(last_fault_iteration_, backend_.Now(), &out);
  return out;
}

void Executor::SetIssueOrder(const IssueOrder* order) {
  issue_position_.clear();
  if (order == nullptr) return;
  for (const auto& [group, ids] : *order) {
    for (size_t i = 0; i < ids.size(); ++i) issue_position_.emplace(ids[i], std::pair{group, i});
  }
}

void Executor::SetComputeDurations(const std::map<NodeId, TimeNs>* durations) {
  compute_durations_.clear();
  if (durations != nullptr) compute_durations_ = *durations;
}

Executor::Resource Executor::ResourceFor(const Op& op) const {
  switch (op.kind) {
    case OpKind::kCompute:
      return op.is_cpu_op ? Resource::kCpu : Resource::kGpuCompute;
    case OpKind::kCollective:
    case OpKind::kSend:
      return config_.comm_streams == ExecutorConfig::CommStreams::kOnePerRank ? Resource::kGpuComm
                                                                              : Resource::kNone;
    case OpKind::kMemLoad:
    case OpKind::kMemStore:
      return Resource::kMemory;
    case OpKind::kRecv:
    case OpKind::kMetadata:
    case OpKind::kInvalid:
      return Resource::kNone;
  }
  return Resource::kNone;
}

void Executor::Pump() {
  if (finished_ || stalled_) return;
  if (pumping_) {
    pump_again_ = true;
    return;
  }
  pumping_ = true;
  do {
    pump_again_ = false;
    // Snapshot: issuing mutates the ready set.
    std::vector<NodeId> ready(graph_.ready().begin(), graph_.ready().end());
    for (NodeId id : ready) {
      auto it = ready_ops_.find(id);
      if (it == ready_ops_.end()) {
        auto op = graph_.Load(id);
        if (!op.ok()) {
          pumping_ = false;
          Fail(op.status());
          return;
        }
        it = ready_ops_.emplace(id, std::move(op).value()).first;
      }
      if (TryIssue(it->second)) ready_ops_.erase(it);
      if (finished_) {
        pumping_ = false;
        return;
      }
    }
  } while (pump_again_);
  pumping_ = false;

  if (in_flight_.empty() && graph_.AllComplete()) {
    finished_ = true;
    summary_.finish = backend_.Now();
    summary_.compute_ns = compute_ns_;
    summary_.comm_ns = comm_ns_;
    summary_.exposed_comm_ns = summary_.finish - summary_.start - compute_ns_ - summary_.stall_ns;
    summary_.compute_excess_ns = compute_excess_ns_;
    if (config_.cpu_wait_clock) {
      summary_.cpu_wait_ns = std::max<TimeNs>(0, config_.cpu_wait_clock() - cpu_wait_at_start_);
    }
    if (config_.tcp_timeouts_counter) {
      const int64_t now = config_.tcp_timeouts_counter();
      summary_.tcp_timeouts = std::max<int64_t>(0, now - tcp_timeouts_at_start_);
      if (summary_.tcp_timeouts > 0) summary_.host_id = config_.host_id;
      tcp_timeouts_at_start_ = now;
    }
    if (config_.probe_rtt_counter) {
      const record::ProbeRttReading now = config_.probe_rtt_counter();
      summary_.probe_rtt_episodes =
          std::max<int64_t>(0, now.episodes - probe_rtt_at_start_.episodes);
      summary_.probe_rtt_ns = std::max<TimeNs>(0, now.ns - probe_rtt_at_start_.ns);
      // An episode counted here may have begun before (it turned busy since): at the start.
      if (summary_.probe_rtt_episodes > 0 && now.last_begin >= 0) {
        summary_.probe_rtt_at_ns = std::max<TimeNs>(0, now.last_begin - summary_.start);
      }
      probe_rtt_at_start_ = now;
    }
    if (recorder_ != nullptr) recorder_->OnRankDone(summary_);
    if (done_) done_(status_);
  }
}

bool Executor::TryIssue(const Op& op) {
  const Resource resource = ResourceFor(op);
  if (resource != Resource::kNone && busy_[static_cast<int>(resource)] > 0) return false;
  if (!issue_position_.empty()) {
    auto pos = issue_position_.find(op.id);
    if (pos != issue_position_.end()) {
      size_t& next = issue_next_[pos->second.first];
      if (pos->second.second > next) return false;  // an earlier one of its group has not issued
      if (pos->second.second == next) {
        ++next;
        pump_again_ = true;  // the one after it may be waiting
      }
    }
  }
  graph_.Take(op.id);

  if (op.kind == OpKind::kMetadata || op.kind == OpKind::kInvalid) {
    graph_.Complete(op.id);  // no time; dependents may now be ready
    pump_again_ = true;
    return true;
  }

  auto flight = std::make_unique<InFlight>();
  flight->op = op;
  flight->start = backend_.Now();
  flight->resource = resource;
  ++busy_[static_cast<int>(resource)];
  InFlight& f = *flight;
  in_flight_.emplace(op.id, std::move(flight));
  const NodeId id = op.id;

  Status st;
  switch (op.kind) {
    case OpKind::kCompute: {
      // Like a kernel queued behind the one that just finished, a compute op starts at the
      // moment its last dependency completed, not when this loop got round to it: sleeping
      // to an absolute deadline keeps a long chain of compute from drifting late.
      TimeNs d = compute_.Duration(op);
      auto given = op.is_cpu_op ? compute_durations_.end() : compute_durations_.find(op.id);
      if (given != compute_durations_.end()) {
        compute_excess_ns_ = SaturatingAdd(compute_excess_ns_, given->second - d);
        d = given->second;
      } else if (fault_iteration_ >= 1 && !op.is_cpu_op) {
        const TimeNs traced = d;
        d = faults_->Apply(traced, fault_iteration_, op.id);
        compute_excess_ns_ = SaturatingAdd(compute_excess_ns_, d - traced);
      }
      if (!op.is_cpu_op) compute_ns_ = SaturatingAdd(compute_ns_, d);
      f.start = std::min(f.start, ready_time_);
      f.end_target = SaturatingAdd(f.start, d);  // the backend refuses a time past the end
      if (f.end_target < backend_.Now()) {
        // Already over: a GPU stream ran it while this rank's thread was elsewhere (waiting
        // for a core, in the network stack). Done now, so that a chain of short kernels costs
        // the thread no loop turn (and no wait for a core) per kernel. Never in simulation,
        // where an op is issued at the time it became ready.
        Finish(id);
        break;
      }
      backend_.After(f.end_target - backend_.Now(), [this, id] { Finish(id); });
      break;
    }
    case OpKind::kMemLoad:
    case OpKind::kMemStore: {
      // No memory model is ASTRA-sim's default, NO_MEMORY_EXPANSION: an access is an error,
      // never free (genie run and simulate alike).
      if (!config_.memory.has_value() ||
          config_.memory->type == config::MemoryType::kNoMemoryExpansion) {
        st = Status::InvalidArgument(
            "rank " + std::to_string(rank_) + ", node " + std::to_string(op.id) + " (" + op.name +
            ") is a remote memory access but " +
            (config_.memory.has_value() ? config_.memory->path
                                        : std::string("no --memory was given, and the default")) +
            " says NO_MEMORY_EXPANSION; give a memory.json with remote-mem-latency/-bw");
        break;
      }
      if (config_.remote_memory != nullptr) {
        // A real run learns when its access is due (the watchdog knows it is busy till then).
        f.end_target = config_.remote_memory->Issue(rank_, op.tensor_size, backend_,
                                                    [this, id] { Finish(id); });
        break;
      }
      backend_.After(config_.memory->AccessTimeNs(op.tensor_size), [this, id] { Finish(id); });
      break;
    }
    case OpKind::kCollective:
      st = IssueCollective(f);
      break;
    case OpKind::kSend:
    case OpKind::kRecv:
      st = IssueP2p(f);
      break;
    default:
      break;
  }
  if (!st.ok()) {
    Fail(st);
    return true;
  }
  if (op.kind == OpKind::kCollective || op.kind == OpKind::kSend || op.kind == OpKind::kRecv) {
    if (comm_in_flight_++ == 0) comm_busy_since_ = backend_.Now();
  }
  return true;
}

Result<std::vector<int>> Executor::GroupMembers(const Op& op) const {
  return runtime::GroupMembers(op, config_, graph_.metadata_groups(), rank_);
}

Status Executor::IndexCommunication() {
  using Key = std::tuple<int, int64_t, int64_t>;  // (kind, group or peer, tag)
  std::map<Key, std::vector<NodeId>> by_key;
  std::map<int64_t, std::vector<NodeId>> all_reduces;  // per group
  for (NodeId id : graph_.ids()) {
    GENIE_ASSIGN_OR_RETURN(Op op, graph_.Load(id));
    switch (op.kind) {
      case OpKind::kCollective:
        by_key[{0, op.group, 0}].push_back(id);
        if (op.coll_type == CollectiveType::kAllReduce) all_reduces[op.group].push_back(id);
        break;
      case OpKind::kSend:
        by_key[{1, op.dst, op.tag}].push_back(id);
        break;
      case OpKind::kRecv:
        by_key[{2, op.src, op.tag}].push_back(id);
        break;
      default:
        break;
    }
  }
  for (const auto& [key, ids] : by_key) {
    for (uint32_t i = 0; i < ids.size(); ++i) {
      ordinal_[ids[i]] = Ordinal{i, static_cast<uint32_t>(ids.size())};
    }
  }
  for (const auto& [group, ids] : all_reduces) {
    for (uint32_t i = 0; i < ids.size(); ++i) {
      ordinal_[ids[i]].all_reduce_index = i;
      ordinal_[ids[i]].all_reduces_per_iteration = static_cast<uint32_t>(ids.size());
    }
  }
  indexed_ = true;
  return Status::Ok();
}

uint64_t Executor::CollectiveTag(const Op& op, const std::vector<int>& members) const {
  const Ordinal& o = ordinal_.at(op.id);
  const uint64_t seq = static_cast<uint64_t>(starts_ - 1) * o.per_iteration + o.index;
  return ((GroupHash(members) & 0x3fff) << 48) | ((seq & 0xffff) << 32);
}

uint64_t Executor::P2pTag(const Op& op) const {
  const Ordinal& o = ordinal_.at(op.id);
  const uint64_t seq = static_cast<uint64_t>(starts_ - 1) * o.per_iteration + o.index;
  return kP2pBit | ((static_cast<uint64_t>(op.tag) & 0x7fffffffull) << 32) | (seq & 0xffffffffull);
}

Status Executor::IssueCollective(InFlight& f) {
  const Op& op = f.op;
  GENIE_ASSIGN_OR_RETURN(CollectivePlan plan,
                         SpecCollective(op, config_, graph_.metadata_groups(), rank_));
  if (op.coll_type == CollectiveType::kAllReduce) {
    // Program order, not issue order: every rank of the group picks the same tree.
    const Ordinal& o = ordinal_.at(op.id);
    const uint64_t seq =
        static_cast<uint64_t>(starts_ - 1) * o.all_reduces_per_iteration + o.all_reduce_index;
    plan.spec.options.tree_stream =
        static_cast<uint32_t>(seq * static_cast<uint64_t>(std::max(1, plan.spec.options.chunks)));
  }
  const std::vector<int>& members = plan.members;
  const collective::CollectiveSpec& spec = plan.spec;
  const int group_index = plan.group_index;
  // Simulated and without payloads to verify, the runner plans each chunk when it starts
  // (chunk 0 now, so that a planning error names this node) and holds only the running
  // chunks' steps. A real run plans everything here: no planning on the loop mid-collective.
  // Under themis every chunk has its own order of dimensions, which the lazy runner (it takes
  // chunk 0's for all) cannot know before planning: plan all up front.
  const bool lazy = backend_.modelled() && !config_.verify && spec.options.chunks > 1 &&
                    spec.options.inter_dim == collective::InterDimScheduling::kBaseline;
  // A simulation's schedule cache also skips planning: ranks whose chunks are equal up to a
  // rotation plan each chunk once between them (compact_chunk.h, PlanShared). One chunk is
  // planned the same way (PlanChunk of the only chunk is Plan).
  ScheduleCache* cache = backend_.schedule_cache();
  const bool shared = cache != nullptr && backend_.modelled() && !config_.verify &&
                      spec.options.inter_dim == collective::InterDimScheduling::kBaseline;
  // A real rank without payloads to verify takes the plan it made in an earlier iteration
  // (plan_memo.h): planning at every start is CPU the ranks' shared cores would count as the
  // network's.
  std::shared_ptr<const PlanMemo::Chunks> memo;
  if (!backend_.modelled() && !config_.verify &&
      spec.options.inter_dim == collective::InterDimScheduling::kBaseline) {
    auto got = plans_.Get(spec, group_index, backend_.world_size());
    if (!got.ok()) {
      return got.status().WithContext("rank " + std::to_string(rank_) + ", node " +
                                      std::to_string(op.id) + " (" + op.name + ")");
    }
    memo = std::move(got).value();
  }
  std::shared_ptr<const PlanKey> key;
  std::shared_ptr<const CompactChunk> first;
  Result<collective::Schedule> schedule = collective::Schedule{};
  if (memo == nullptr && shared) {
    key = cache->InternKey(RotationKey(spec, group_index, backend_.world_size()));
    auto planned = PlanShared(spec, group_index, backend_.world_size(), 0, key, *cache);
    if (planned.ok()) {
      first = std::move(planned).value();
    } else {
      schedule = planned.status();
    }
  } else if (memo == nullptr) {
    schedule =
        lazy ? collective::PlanChunk(spec, group_index, 0) : collective::Plan(spec, group_index);
  }
  if (!schedule.ok()) {
    return schedule.status().WithContext("rank " + std::to_string(rank_) + ", node " +
                                         std::to_string(op.id) + " (" + op.name + ")");
  }
  f.algorithm = plan.algorithm;
  f.group_size = static_cast<int>(members.size());
  const NodeId id = op.id;
  const uint64_t tag = CollectiveTag(op, members);
  std::vector<uint8_t>* buffer = nullptr;
  if (config_.verify) {
    if (spec.size % 4 != 0) {
      ++unverifiable_;  // verification works on whole float32 elements
    } else {
      collective::BufferLayout layout = collective::Layout(spec, group_index);
      if (!spare_buffers_.empty()) {
        // The smallest spare that holds this buffer, else the largest: one that grows is
        // reallocated and its new bytes zero-filled (taking the last spare instead cost the
        // pipelined --verify e2e test 10-14% more CPU).
        size_t pick = 0;
        for (size_t i = 1; i < spare_buffers_.size(); ++i) {
          const Bytes have = spare_buffers_[pick].capacity(), cap = spare_buffers_[i].capacity();
          const bool fits = cap >= layout.buffer_bytes, picked_fits = have >= layout.buffer_bytes;
          if ((fits && (!picked_fits || cap < have)) || (!fits && !picked_fits && cap > have)) {
            pick = i;
          }
        }
        f.buffer = std::move(spare_buffers_[pick]);
        spare_buffers_.erase(spare_buffers_.begin() + static_cast<std::ptrdiff_t>(pick));
      }
      // Sized from the plan before a byte is allocated: a buffer the machine cannot hold is
      // refused with what it needs, never a std::bad_alloc (or the OOM killer) mid-run.
      if (layout.buffer_bytes > f.buffer.capacity()) {
        f.buffer.clear();  // nothing to carry over: the reallocation need not copy it
        Bytes largest_receive = 0;
        for (const auto& step : schedule->steps) {
          largest_receive = std::max<Bytes>(largest_receive, step.recv.length);
        }
        GENIE_RETURN_IF_ERROR(ReserveVerifyBuffer(f, layout.buffer_bytes, largest_receive));
      }
      FillInitial(layout, f.buffer);
      f.expected = std::move(layout.final);
      buffer = &f.buffer;
    }
  }
  Callback done = [this, id] {
    auto& fl = *in_flight_.at(id);
    if (config_.verify && !fl.expected.empty()) {
      Status st = Verify(fl);
      if (!st.ok()) {
        Fail(st);
        return;
      }
      ++verified_;
    }
    Finish(id, fl.runner->bytes_sent(), fl.runner->bytes_received());
  };
  if (memo != nullptr) {
    f.runner = std::make_unique<CollectiveRunner>(
        backend_, memo->front(), static_cast<uint32_t>(memo->size()),
        [memo](uint32_t chunk) { return (*memo)[chunk]; }, tag, config_.costs,
        config_.plan.active_chunks, config_.policy, std::move(done));
  } else if (shared) {
    const int world = backend_.world_size();
    f.runner = std::make_unique<CollectiveRunner>(
        backend_, std::move(first), static_cast<uint32_t>(std::max(1, spec.options.chunks)),
        [spec, group_index, world, key, cache](uint32_t chunk) {
          auto c = PlanShared(spec, group_index, world, chunk, key, *cache);
          GENIE_CHECK(c.ok()) << "planning chunk " << chunk << ": " << c.status().message();
          return std::move(c).value();
        },
        tag, config_.costs, config_.plan.active_chunks, config_.policy, std::move(done));
  } else if (lazy) {
    f.runner = std::make_unique<CollectiveRunner>(
        backend_, std::move(schedule).value(), static_cast<uint32_t>(spec.options.chunks),
        [spec, group_index](uint32_t chunk) {
          return collective::PlanChunk(spec, group_index, static_cast<int>(chunk));
        },
        tag, config_.costs, config_.plan.active_chunks, config_.policy, std::move(done));
  } else {
    f.runner = std::make_unique<CollectiveRunner>(backend_, std::move(schedule).value(), tag,
                                                  config_.costs, config_.plan.active_chunks,
                                                  config_.policy, buffer, std::move(done));
  }
  // The chunks' identity for the flow model's pacing: the whole group hash and the sequence
  // number, mixed (the tag's 14 bits of group collide: 32 of 128 expert-parallel groups at
  // 1,024 ranks paced each other's messages).
  uint64_t flow = GroupHash(members) ^ (0x9e3779b97f4a7c15ull * (((tag >> 32) & 0xffff) + 1));
  flow = (flow ^ (flow >> 31)) * 0xbf58476d1ce4e5b9ull;
  f.runner->set_flow_base((flow ^ (flow >> 29)) | (uint64_t{1} << 32));
  f.runner->Start();
  return Status::Ok();
}

Status Executor::ReserveVerifyBuffer(InFlight& f, Bytes bytes, Bytes largest_receive) {
  Bytes held = 0;  // buffers of the other collectives in flight
  for (const auto& [id, other] : in_flight_) {
    if (other.get() != &f) held += other->buffer.capacity();
  }
  // Receives land in scratch before they are reduced or copied: at least the largest one.
  return ReserveVerifyData(f.buffer, bytes, bytes + largest_receive, held, Describe(f.op));
}

// SEND and RECV: one message to or from the peer the trace names (own rank already implied
// by the trace layer where the trace leaves it out).
Status Executor::IssueP2p(InFlight& f) {
  const Op& op = f.op;
  const bool send = op.kind == OpKind::kSend;
  const int peer = send ? op.dst : op.src;
  if (peer < 0 || peer >= config_.world_size) {
    return Status::InvalidArgument("rank " + std::to_string(rank_) + ", node " +
                                   std::to_string(op.id) + " (" + op.name + "): " +
                                   (send ? "SEND has no valid destination rank (comm_dst = "
                                         : "RECV has no valid source rank (comm_src = ") +
                                   std::to_string(peer) + ")");
  }
  if (op.comm_size > kMaxWireMessageBytes) {
    // Collectives are cut into slices by the planner; a SEND is one message by definition.
    return Status::InvalidArgument(
        "rank " + std::to_string(rank_) + ", node " + std::to_string(op.id) + " (" + op.name +
        "): " + (send ? "SEND of " : "RECV of ") + FormatBytes(op.comm_size) +
        (send ? " to rank " : " from rank ") + std::to_string(peer) +
        " is larger than one message may be on the wire (" + FormatBytes(kMaxWireMessageBytes) +
        "); split it into several SEND/RECV nodes (genie inspect lists every such node)");
  }
  Message msg;
  msg.peer = peer;
  msg.tag = P2pTag(op);
  msg.bytes = op.comm_size;
  const NodeId id = op.id;
  const Bytes bytes = op.comm_size;
  f.group_size = 2;
  if (send)
    backend_.Send(msg, [this, id, bytes] { Finish(id, bytes, 0); });
  else
    backend_.Recv(msg, [this, id, bytes] { Finish(id, 0, bytes); });
  return Status::Ok();
}

void Executor::Finish(NodeId id, Bytes sent, Bytes received) {
  if (finished_) return;
  auto it = in_flight_.find(id);
  GENIE_CHECK(it != in_flight_.end()) << "completion for node " << id << " not in flight";
  std::unique_ptr<InFlight> f = std::move(it->second);
  in_flight_.erase(it);
  if (f->buffer.capacity() > 0 && spare_buffers_.size() < 8) {
    spare_buffers_.push_back(std::move(f->buffer));
  }
  const TimeNs now = backend_.Now();
  last_progress_ = now;
  // Dependents of a compute op became ready when it was due to end (see TryIssue).
  ready_time_ = f->end_target > 0 ? std::min(now, f->end_target) : now;
  --busy_[static_cast<int>(f->resource)];
  const Op& op = f->op;
  const bool comm =
      op.kind == OpKind::kCollective || op.kind == OpKind::kSend || op.kind == OpKind::kRecv;
  if (comm && --comm_in_flight_ == 0) comm_ns_ += now - comm_busy_since_;

  if (recorder_ != nullptr) {
    record::OpEvent e;
    e.rank = rank_;
    e.iteration = iteration_;
    e.node = op.id;
    e.name = op.name;
    e.kind = op.kind;
    e.is_cpu_op = op.is_cpu_op;
    e.start = f->start;
    e.end = now;
    e.coll_type = op.coll_type;
    e.size = op.comm_size;
    e.group = op.group;
    e.group_size = f->group_size;
    e.algorithm = f->algorithm;
    e.peer = op.kind == OpKind::kSend ? op.dst : (op.kind == OpKind::kRecv ? op.src : -1);
    e.bytes_sent = sent;
    e.bytes_received = received;
    if (f->runner) e.phases = f->runner->phase_spans();
    recorder_->OnOp(e);
  }
  graph_.Complete(id);
  Pump();
}

Status Executor::Verify(const InFlight& f) const {
  return CheckFinal(f.expected, f.buffer,
                    "verify failed on " + Describe(f.op) + ", " + f.algorithm);
}

std::string Executor::Describe(const Op& op) const {
  return "rank " + std::to_string(rank_) + ", node " + std::to_string(op.id) + " (" + op.name +
         ", " + CollectiveTypeName(op.coll_type) + " of " + FormatBytes(op.comm_size) + ")";
}

void Executor::Fail(Status status) {
  if (finished_) return;
  finished_ = true;
  status_ = std::move(status);
  if (done_) done_(status_);
}

TimeNs Executor::busy_until() const {
  TimeNs until = 0;
  for (const auto& [id, f] : in_flight_) until = std::max(until, f->end_target);
  if (stalled_) until = std::max(until, stall_until_);
  return until;
}

std::string Executor::DescribePending() const {
  std::ostringstream out;
  if (stalled_) {
    out << "  rank " << rank_ << " stalls (a compute fault of the --faults schedule) for "
        << FormatDuration(stall_until_ - backend_.Now()) << " more\n";
  }
  for (const auto& [id, f] : in_flight_) {
    const Op& op = f->op;
    out << "  rank " << rank_ << " node " << id << " (" << op.name << ", " << OpKindName(op.kind);
    if (op.kind == OpKind::kCollective) {
      out << " " << CollectiveTypeName(op.coll_type) << " " << FormatBytes(op.comm_size) << " over "
          << f->group_size << " ranks";
    } else if (op.kind == OpKind::kSend) {
      out << " to rank " << op.dst << " tag " << op.tag;
    } else if (op.kind == OpKind::kRecv) {
      out << " from rank " << op.src << " tag " << op.tag;
    }
    out << ") in flight for " << FormatDuration(backend_.Now() - f->start) << "\n";
  }
  for (const auto& [id, op] : ready_ops_) {
    out << "  rank " << rank_ << " node " << id << " (" << op.name << ", " << OpKindName(op.kind)
        << ") is ready but its resource is busy"
        << (issue_position_.count(id) != 0 ? " or an earlier collective of its group (issue order)"
                                           : "")
        << "\n";
  }
  if (!stalled_ && in_flight_.empty() && ready_ops_.empty() && !graph_.AllComplete()) {
    out << "  rank " << rank_ << ": nothing in flight or ready, " << graph_.completed() << " of "
        << graph_.size() << " nodes done\n";
  }
  return out.str();
}

}  // namespace genie::runtime
