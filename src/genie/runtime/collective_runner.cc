#include "genie/runtime/collective_runner.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::runtime {

using collective::HasRecv;
using collective::HasReduce;
using collective::HasSend;
using collective::SchedulingPolicy;
using collective::StepKind;

CollectiveRunner::CollectiveRunner(Backend& backend, collective::Schedule schedule,
                                   uint64_t tag_base, const LocalCosts& costs, int active_chunks,
                                   SchedulingPolicy policy, std::vector<uint8_t>* buffer,
                                   Callback done)
    : backend_(backend),
      tag_base_(tag_base),
      rank_(backend.rank()),
      world_(backend.world_size()),
      buffer_(buffer),
      costs_(costs),
      modelled_(backend.modelled()),
      active_chunks_(active_chunks),
      policy_(policy),
      done_(std::move(done)) {
  if (buffer_ != nullptr) GENIE_CHECK_EQ(buffer_->size(), schedule.buffer_bytes);
  // Split the schedule by chunk; each chunk's steps and phases are renumbered from 0.
  uint32_t count = 0;
  for (const auto& phase : schedule.phases) count = std::max(count, phase.chunk + 1);
  GENIE_CHECK(count < (1u << 28)) << count << " chunks: events number at most 2^28";
  ResizeChunks(count);
  std::vector<collective::Schedule> plans(count);
  for (const auto& phase : schedule.phases) {
    Chunk& c = chunks_[phase.chunk];
    collective::Schedule& plan = plans[phase.chunk];
    const uint32_t begin = static_cast<uint32_t>(plan.steps.size());
    for (uint32_t st = phase.begin; st < phase.end; ++st) {
      collective::Step step = std::move(schedule.steps[st]);
      for (uint32_t& d : step.deps) {
        GENIE_CHECK(d >= phase.begin && d < st) << "step dependencies must point backwards "
                                                   "within their phase";
        d = d - phase.begin + begin;
      }
      plan.steps.push_back(std::move(step));
    }
    collective::Phase local = phase;
    local.begin = begin;
    local.end = static_cast<uint32_t>(plan.steps.size());
    plan.phases.push_back(local);
    c.dims.push_back(phase.dim);
    c.planned = true;
  }
  schedule = collective::Schedule{};
  uint16_t max_dim = 0;
  for (uint32_t k = 0; k < count; ++k) {
    Prepare(chunks_[k], plans[k]);
    plans[k] = collective::Schedule{};
    for (uint16_t d : chunks_[k].dims) max_dim = std::max(max_dim, d);
  }
  SetUpDimensions(max_dim, false);
}

namespace {

// The compact form of `plan` for the backend's rank, shared through its cache when it has one.
std::shared_ptr<const CompactChunk> Share(Backend& backend, const collective::Schedule& plan) {
  CompactChunk compact = Compact(plan, backend.rank(), backend.world_size(), nullptr);
  ScheduleCache* cache = backend.schedule_cache();
  return cache != nullptr ? cache->Intern(std::move(compact))
                          : std::make_shared<const CompactChunk>(std::move(compact));
}

}  // namespace

CollectiveRunner::CollectiveRunner(Backend& backend, collective::Schedule first, uint32_t chunks,
                                   ChunkPlanner plan, uint64_t tag_base, const LocalCosts& costs,
                                   int active_chunks, SchedulingPolicy policy, Callback done)
    : CollectiveRunner(
          backend, Share(backend, first), chunks,
          [&backend, plan = std::move(plan)](uint32_t chunk) {
            auto p = plan(chunk);
            GENIE_CHECK(p.ok()) << "planning chunk " << chunk << ": " << p.status().message();
            return Share(backend, *p);
          },
          tag_base, costs, active_chunks, policy, std::move(done)) {}

CollectiveRunner::CollectiveRunner(Backend& backend, SharedChunk first, uint32_t chunks,
                                   CompactPlanner plan, uint64_t tag_base, const LocalCosts& costs,
                                   int active_chunks, SchedulingPolicy policy, Callback done)
    : backend_(backend),
      tag_base_(tag_base),
      rank_(backend.rank()),
      world_(backend.world_size()),
      buffer_(nullptr),
      costs_(costs),
      modelled_(backend.modelled()),
      active_chunks_(active_chunks),
      policy_(policy),
      done_(std::move(done)),
      plan_(std::move(plan)) {
  GENIE_CHECK(chunks >= 1) << "a collective of no chunks";
  GENIE_CHECK(chunks < (1u << 28)) << chunks << " chunks: events number at most 2^28";
  std::vector<uint16_t> dims;
  uint16_t max_dim = 0;
  for (const auto& phase : first->phases) {
    dims.push_back(static_cast<uint16_t>(phase.dim));
    max_dim = std::max(max_dim, static_cast<uint16_t>(phase.dim));
  }
  ResizeChunks(dims.empty() ? 0 : chunks);  // no phases: nothing to run in any chunk
  for (Chunk& c : Chunks()) c.dims = dims;
  if (num_chunks_ > 0) {
    chunks_[0].planned = true;
    Adopt(chunks_[0], std::move(first));
  } else {
    ScheduleCache* cache = backend_.schedule_cache();
    if (cache != nullptr) cache->Release(first);
  }
  SetUpDimensions(max_dim, true);
}

void CollectiveRunner::SetUpDimensions(uint16_t max_dim, bool one_order) {
  active_in_dim_.assign(max_dim + 1, 0);
  waiting_in_dim_.resize(max_dim + 1);
  record_spans_ = max_dim > 0;
  if (one_order && modelled_) return;  // below: nothing to do (a simulation's hot path)
  // Chunks that visit the dimensions in different orders (themis), or a dimension twice
  // (localBWAware's reduce-scatter and all-gather), can enter a dimension in a different order
  // on two ranks of it when their timing differs, each then waiting for the other's chunk: a
  // deadlock on a real network. Each dimension then admits its chunks in one order every rank
  // knows: by the phase's position in its chunk, then by chunk (last first under LIFO). Every
  // wait points to an earlier (position, chunk), so none can close a cycle. Simulated ranks
  // of one order keep ASTRA-sim's arrival order (their timing is the model's, and equal).
  // On a real network one order is not enough either once a chunk crosses two dimensions:
  // the two ranks of a later dimension get their chunks from different groups of the earlier
  // one, at different times, and LIFO admits whichever arrived last (a 3-D all-reduce or
  // all-to-all in 4 chunks deadlocked).
  bool same_order = true, repeats = false;
  for (const Chunk& c : Chunks()) {
    same_order = same_order && c.dims == chunks_[0].dims;
    std::vector<uint16_t> sorted = c.dims;
    std::sort(sorted.begin(), sorted.end());
    repeats = repeats || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
  }
  const bool crosses = num_chunks_ > 0 && chunks_[0].dims.size() > 1;
  if (!same_order || ((repeats || crosses) && !modelled_)) {
    const uint32_t n = num_chunks_;
    const bool lifo = policy_ == SchedulingPolicy::kLifo;
    std::vector<std::vector<std::pair<size_t, uint32_t>>> uses(max_dim + 1);
    for (uint32_t k = 0; k < n; ++k) {
      for (size_t p = 0; p < chunks_[k].dims.size(); ++p) {
        uses[chunks_[k].dims[p]].push_back({p, lifo ? n - 1 - k : k});
      }
    }
    dim_sequence_.resize(max_dim + 1);
    dim_next_.assign(max_dim + 1, 0);
    for (size_t d = 0; d < uses.size(); ++d) {
      std::sort(uses[d].begin(), uses[d].end());
      for (const auto& [p, key] : uses[d]) dim_sequence_[d].push_back(lifo ? n - 1 - key : key);
    }
  }
}

CollectiveRunner::~CollectiveRunner() {
  for (Chunk& c : Chunks()) Release(c);
}

void CollectiveRunner::ResizeChunks(uint32_t n) {
  GENIE_CHECK(num_chunks_ == 0) << "chunks set twice";
  if (n > kLocalChunks) {
    heap_chunks_ = std::make_unique<Chunk[]>(n);
    chunks_ = heap_chunks_.get();
  } else {
    chunks_ = local_chunks_;
  }
  num_chunks_ = n;
}

void CollectiveRunner::Prepare(Chunk& c, const collective::Schedule& plan) {
  CompactChunk compact = Compact(plan, rank_, world_, buffer_ != nullptr ? &c.ranges : nullptr);
  ScheduleCache* cache = buffer_ == nullptr ? backend_.schedule_cache() : nullptr;
  Adopt(c, cache != nullptr ? cache->Intern(std::move(compact))
                            : std::make_shared<const CompactChunk>(std::move(compact)));
}

void CollectiveRunner::Adopt(Chunk& c, SharedChunk plan) {
  c.plan = std::move(plan);
  c.p = c.plan.get();
  const CompactChunk& p = *c.plan;
  const uint32_t n = p.size();
  c.steps.Init(p, buffer_ == nullptr ? backend_.schedule_cache() : nullptr);
  c.early.clear();
  const uint32_t phases = static_cast<uint32_t>(p.phases.size());
  c.more_phases.assign(phases > kInlinePhases ? phases - kInlinePhases : 0, PhaseState{});
  for (uint32_t k = 0; k < phases; ++k) {
    c.phase(k) = PhaseState{};
    c.phase(k).remaining_steps = p.phases[k].end - p.phases[k].begin;
  }
  if (buffer_ != nullptr) c.scratch.resize(n);
}

void CollectiveRunner::StepStates::Init(const CompactChunk& plan, ScheduleCache* cache) {
  const uint32_t n = plan.size();
  const uint32_t most = plan.most_deps;
  narrow_ = nullptr;
  stride_ = 1;
  own_.clear();
  wide_.clear();
  const auto initial = [&plan, n](std::vector<uint8_t>& cells) {
    for (uint32_t i = 0; i < n; ++i) cells[i] = static_cast<uint8_t>(plan.steps[i].deps);
  };
  if (most < kNarrowStarted) {
    if (cache != nullptr) {
      slot_ = cache->AcquireStates(&plan, initial);
      narrow_ = slot_.cells;
      stride_ = slot_.stride;
    } else {
      own_.resize(n);
      initial(own_);
      narrow_ = own_.data();
    }
  } else {
    wide_.resize(n);
    for (uint32_t i = 0; i < n; ++i) wide_[i] = plan.steps[i].deps;
  }
}

void CollectiveRunner::StepStates::Release(const CompactChunk* plan, ScheduleCache* cache) {
  if (slot_.cells != nullptr) {
    cache->ReleaseStates(plan, slot_);
    slot_ = ScheduleCache::StateSlot{};
  }
  narrow_ = nullptr;
}

void CollectiveRunner::Release(Chunk& c) {
  ScheduleCache* cache = backend_.schedule_cache();
  if (c.plan != nullptr) c.steps.Release(c.plan.get(), cache);
  if (cache != nullptr)
    cache->Release(c.plan);
  else
    c.plan.reset();
}

void CollectiveRunner::Start() {
  chunks_left_ = num_chunks_;
  if (chunks_left_ == 0) {
    backend_.After(0, std::move(done_));
    return;
  }
  for (uint32_t c = 0; c < num_chunks_; ++c) EnterNextPhase(c);
}

// Queues `chunk` for its next phase's dimension, or finishes it.
void CollectiveRunner::EnterNextPhase(uint32_t chunk) {
  Chunk& c = chunks_[chunk];
  if (c.next == c.dims.size()) {
    Release(c);
    c = Chunk{};  // done: release its steps (no callback refers to them any more)
    if (--chunks_left_ == 0) backend_.After(0, std::move(done_));
    return;
  }
  uint16_t dim = c.dims[c.next];
  if (policy_ == SchedulingPolicy::kLifo)
    waiting_in_dim_[dim].push_front(chunk);
  else
    waiting_in_dim_[dim].push_back(chunk);
  AdmitWaiting(dim);
}

void CollectiveRunner::AdmitWaiting(uint16_t dim) {
  auto& waiting = waiting_in_dim_[dim];
  while (!waiting.empty() && (active_chunks_ <= 0 || active_in_dim_[dim] < active_chunks_)) {
    uint32_t chunk = waiting.front();
    if (!dim_sequence_.empty()) {
      // Fixed order: only the dimension's next chunk in its sequence may enter.
      const auto& seq = dim_sequence_[dim];
      if (dim_next_[dim] >= seq.size()) break;
      chunk = seq[dim_next_[dim]];
      auto it = std::find(waiting.begin(), waiting.end(), chunk);
      if (it == waiting.end()) break;
      waiting.erase(it);
      ++dim_next_[dim];
    } else {
      waiting.pop_front();
    }
    ++active_in_dim_[dim];
    Chunk& c = chunks_[chunk];
    if (!c.planned) {
      // Chunk 0 was planned when the collective was issued, so a failure here is the
      // planner's bug (the chunks differ only in their byte ranges).
      SharedChunk plan = plan_(chunk);
      GENIE_CHECK_EQ(plan->phases.size(), c.dims.size()) << "chunk " << chunk;
      for (size_t p = 0; p < c.dims.size(); ++p) {
        GENIE_CHECK_EQ(plan->phases[p].dim, uint32_t{c.dims[p]})
            << "chunk " << chunk << " phase " << p;
      }
      c.planned = true;
      Adopt(c, std::move(plan));
    }
    StartPhase(chunk, c.next);
  }
}

void CollectiveRunner::StartPhase(uint32_t chunk, uint32_t phase_index) {
  Chunk& c = chunks_[chunk];
  const auto& phase = c.p->phases[phase_index];
  c.phase(phase_index).started = true;
  c.phase(phase_index).start = backend_.Now();
  if (phase.begin == phase.end) {
    CompletePhase(chunk, phase_index);
    return;
  }
  // The steps ready now, in index order: the phase's roots and the steps whose dependencies
  // were met before it began. (A step met while the walk runs is started by CompleteStep, the
  // phase having begun; StartStep never starts one twice.)
  const std::vector<uint32_t>& roots = c.p->roots;
  auto r = std::lower_bound(roots.begin(), roots.end(), phase.begin);
  const auto r_end = std::lower_bound(r, roots.end(), phase.end);
  std::vector<uint32_t> met;  // nearly always empty: no allocation
  std::erase_if(c.early, [&](uint32_t s) {
    if (c.p->steps[s].phase != phase_index) return false;
    met.push_back(s);
    return true;
  });
  std::sort(met.begin(), met.end());
  auto m = met.begin();
  while (r != r_end || m != met.end()) {
    if (m == met.end() || (r != r_end && *r < *m)) {
      StartStep(chunk, *r++);
    } else {
      StartStep(chunk, *m++);
    }
  }
}

void CollectiveRunner::StartStep(uint32_t chunk, uint32_t s) {
  Chunk& c = chunks_[chunk];
  // A dependency may finish before this step's phase has begun (the planner may order steps
  // across phases): StepStates keeps it blocked, and the phase start picks it up then. Never
  // start a step twice.
  if (!c.steps.Start(s)) return;
  const auto& step = c.p->steps[s];
  if (step.kind == StepKind::kCopy) {  // a local re-arrangement: no message, no modelled time
    if (buffer_ != nullptr && step.bytes > 0) {
      const auto& [from, to] = c.ranges[s];
      std::memmove(buffer_->data() + to.offset, buffer_->data() + from.offset, to.length);
    }
    // Completed from the loop, never inside StartPhase's walk over the phase's steps.
    backend_.AfterEvent(0, this, Encode(Ev::kSent, chunk, s));
    return;
  }
  if (!HasRecv(step.kind)) {
    SendFor(chunk, s);
    return;
  }
  Message msg;
  msg.peer = PeerOf(step.recv_delta);
  msg.tag = tag_base_ | step.recv_tag;
  msg.bytes = step.bytes;
  msg.channel = step.channel;
  if (buffer_ != nullptr) {
    c.scratch[s] = std::make_unique_for_overwrite<uint8_t[]>(step.bytes);
    msg.into = c.scratch[s].get();
  }
  backend_.RecvEvent(msg, this, Encode(Ev::kReceived, chunk, s));
}

void CollectiveRunner::OnEvent(uint64_t arg) {
  const auto chunk = static_cast<uint32_t>((arg >> 32) & 0x0fffffffu);
  const auto index = static_cast<uint32_t>(arg);
  switch (static_cast<Ev>(arg >> 60)) {
    case Ev::kReceived:
      OnReceived(chunk, index);
      break;
    case Ev::kReduced:
      if (HasSend(chunks_[chunk].p->steps[index].kind))
        SendFor(chunk, index);
      else
        CompleteStep(chunk, index);
      break;
    case Ev::kPost:
      Post(chunk, index);
      break;
    case Ev::kPostDetached:
      Post(chunk, index, /*detached=*/true);
      break;
    case Ev::kSent:
      CompleteStep(chunk, index);
      break;
    case Ev::kPhaseDone:
      FinishPhase(chunk, index);
      break;
  }
}

void CollectiveRunner::OnReceived(uint32_t chunk, uint32_t s) {
  Chunk& c = chunks_[chunk];
  const auto& step = c.p->steps[s];
  bytes_received_ += step.bytes;
  if (buffer_ != nullptr) {
    const collective::ByteRange& recv = c.ranges[s].second;
    const uint8_t* incoming = c.scratch[s].get();
    if (HasReduce(step.kind))
      Reduce(recv, incoming);
    else if (recv.length > 0)
      std::memcpy(buffer_->data() + recv.offset, incoming, recv.length);
    c.scratch[s].reset();
  }
  TimeNs cost = HasReduce(step.kind) && step.charge == collective::ReduceCharge::kOnReceive
                    ? ReductionCost(step.bytes)
                    : 0;
  if (cost > 0 && HasSend(step.kind)) {
    SendFor(chunk, s, cost);  // the reduction, then the send's own delay
  } else if (cost > 0) {
    backend_.AfterEvent(cost, this, Encode(Ev::kReduced, chunk, s));
  } else if (HasSend(step.kind)) {
    SendFor(chunk, s);
  } else {
    CompleteStep(chunk, s);
  }
}

void CollectiveRunner::SendFor(uint32_t chunk, uint32_t s, TimeNs reduced) {
  TimeNs delay = modelled_ ? costs_.endpoint_delay_ns : 0;
  const auto& step = chunks_[chunk].p->steps[s];
  const bool detach = step.charge == collective::ReduceCharge::kBeforeSendDetached;
  const TimeNs reduce = step.charge == collective::ReduceCharge::kBeforeSend || detach
                            ? ReductionCost(step.bytes)
                            : 0;
  delay = SaturatingAdd(delay, reduce);
  // Detached only without payloads: the receiver reads the sender's buffer on delivery.
  const bool detached = detach && modelled_ && buffer_ == nullptr;
  if (!detached && (reduced > 0 || delay > 0)) {
    // The backend holds the message through both delays, in the events (and their order) that
    // kReduced and kPost would be, without visiting this runner (issue 16, part 5).
    const Message msg = MessageFor(chunk, s);
    bytes_sent_ += msg.bytes;
    backend_.SendEventAfter(reduced, delay, msg, this, Encode(Ev::kSent, chunk, s));
    return;
  }
  GENIE_CHECK(reduced == 0) << "a detached send after a reduction on receive";
  if (delay > 0)
    backend_.AfterEvent(delay, this, Encode(detached ? Ev::kPostDetached : Ev::kPost, chunk, s));
  else
    Post(chunk, s, detached);
  // Completes after the reduction, as an event of its own (never inside the caller's loop). The
  // phase's endpoint-delay then ends it as the message leaves, after the Post scheduled above.
  if (detached) backend_.AfterEvent(reduce, this, Encode(Ev::kSent, chunk, s));
}

Message CollectiveRunner::MessageFor(uint32_t chunk, uint32_t s) const {
  const Chunk& c = chunks_[chunk];
  const auto& step = c.p->steps[s];
  Message msg;
  msg.peer = PeerOf(step.send_delta);
  msg.tag = tag_base_ | step.send_tag;
  msg.bytes = step.bytes;
  msg.channel = step.channel;
  // One flow per chunk: its slices and channels share the pair's bandwidth in simulation,
  // while concurrent chunks stay independent, as in ASTRA-sim. The bases' low 32 bits are 0.
  msg.flow = (flow_base_ != 0 ? flow_base_ : tag_base_) | (uint64_t{chunk} + 1);
  if (buffer_ != nullptr) {
    const auto& [send, recv] = c.ranges[s];
    msg.data = buffer_->data() + (step.kind == StepKind::kSend ? send : recv).offset;
  }
  return msg;
}

void CollectiveRunner::Post(uint32_t chunk, uint32_t s, bool detached) {
  const Message msg = MessageFor(chunk, s);
  bytes_sent_ += msg.bytes;
  if (detached)
    backend_.Send(msg, [] {});
  else
    backend_.SendEvent(msg, this, Encode(Ev::kSent, chunk, s));
}

void CollectiveRunner::CompleteStep(uint32_t chunk, uint32_t s) {
  Chunk& c = chunks_[chunk];
  const CompactChunk& plan = *c.p;
  for (uint32_t i = plan.steps[s].dependents_begin; i < plan.steps[s + 1].dependents_begin; ++i) {
    const uint32_t d = plan.dependents[i];
    if (!c.steps.Satisfy(d)) continue;
    if (c.phase(plan.steps[d].phase).started)
      StartStep(chunk, d);
    else
      c.early.push_back(d);
  }
  uint32_t p = plan.steps[s].phase;
  if (--c.phase(p).remaining_steps == 0) CompletePhase(chunk, p);
}

void CollectiveRunner::CompletePhase(uint32_t chunk, uint32_t p) {
  if (modelled_ && costs_.endpoint_delay_ns > 0)
    backend_.AfterEvent(costs_.endpoint_delay_ns, this, Encode(Ev::kPhaseDone, chunk, p));
  else
    FinishPhase(chunk, p);
}

void CollectiveRunner::FinishPhase(uint32_t chunk, uint32_t p) {
  Chunk& c = chunks_[chunk];
  const uint16_t dim = c.dims[p];
  if (record_spans_) {
    spans_.push_back({chunk, dim, static_cast<CollectiveType>(c.p->phases[p].op), c.phase(p).start,
                      backend_.Now()});
  }
  --active_in_dim_[dim];
  ++c.next;
  AdmitWaiting(dim);
  EnterNextPhase(chunk);
}

TimeNs CollectiveRunner::ReductionCost(Bytes bytes) {
  if (bytes == reduction_bytes_) return reduction_cost_;  // a chunk's steps share their size
  reduction_bytes_ = bytes;
  if (!modelled_ || costs_.local_mem_bw <= 0) return reduction_cost_ = 0;
  // ASTRA-sim: three memory passes (read, read, write), each truncated to whole ns.
  // Saturates for sizes past int64 ns; the simulator then refuses the event.
  return reduction_cost_ = SaturatingMul(
             TimeNs{3}, SaturatingTimeNs(static_cast<double>(bytes) / costs_.local_mem_bw));
}

void CollectiveRunner::Reduce(const collective::ByteRange& range, const uint8_t* incoming) {
  uint8_t* dst = buffer_->data() + range.offset;
  if (range.offset % 4 == 0 && range.length % 4 == 0) {
    // float32 elements holding small integers: every summation order is exact.
    for (Bytes i = 0; i < range.length; i += 4) {
      float a, b;
      std::memcpy(&a, dst + i, 4);
      std::memcpy(&b, incoming + i, 4);
      a += b;
      std::memcpy(dst + i, &a, 4);
    }
  } else {
    for (Bytes i = 0; i < range.length; ++i) dst[i] = static_cast<uint8_t>(dst[i] + incoming[i]);
  }
}

}  // namespace genie::runtime
