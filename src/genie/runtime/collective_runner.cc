#include "genie/runtime/collective_runner.h"

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
      schedule_(std::move(schedule)),
      tag_base_(tag_base),
      costs_(costs),
      active_chunks_(active_chunks),
      policy_(policy),
      buffer_(buffer),
      done_(std::move(done)) {
  const auto& steps = schedule_.steps;
  steps_.resize(steps.size());
  for (uint32_t i = 0; i < steps.size(); ++i) {
    steps_[i].unmet_deps = static_cast<uint32_t>(steps[i].deps.size());
    for (uint32_t d : steps[i].deps) {
      GENIE_CHECK_LT(d, i) << "step dependencies must point backwards";
      steps_[d].dependents.push_back(i);
    }
  }
  phases_.resize(schedule_.phases.size());
  uint16_t max_dim = 0;
  for (uint32_t p = 0; p < schedule_.phases.size(); ++p) {
    const auto& phase = schedule_.phases[p];
    phases_[p].remaining_steps = phase.end - phase.begin;
    for (uint32_t st = phase.begin; st < phase.end; ++st) steps_[st].phase = p;
    if (phase.chunk >= chunk_phases_.size()) chunk_phases_.resize(phase.chunk + 1);
    chunk_phases_[phase.chunk].push_back(p);
    max_dim = std::max(max_dim, phase.dim);
  }
  chunk_next_.assign(chunk_phases_.size(), 0);
  active_in_dim_.assign(max_dim + 1, 0);
  waiting_in_dim_.resize(max_dim + 1);
  if (buffer_ != nullptr) {
    GENIE_CHECK_EQ(buffer_->size(), schedule_.buffer_bytes);
    scratch_.resize(steps.size());
  }
}

void CollectiveRunner::Start() {
  chunks_left_ = static_cast<uint32_t>(chunk_phases_.size());
  if (chunks_left_ == 0) {
    backend_.After(0, std::move(done_));
    return;
  }
  for (uint32_t c = 0; c < chunk_phases_.size(); ++c) EnterNextPhase(c);
}

// Queues `chunk` for its next phase's dimension, or finishes it.
void CollectiveRunner::EnterNextPhase(uint32_t chunk) {
  if (chunk_next_[chunk] == chunk_phases_[chunk].size()) {
    if (--chunks_left_ == 0) backend_.After(0, std::move(done_));
    return;
  }
  uint32_t phase = chunk_phases_[chunk][chunk_next_[chunk]];
  uint16_t dim = schedule_.phases[phase].dim;
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
    waiting.pop_front();
    ++active_in_dim_[dim];
    StartPhase(chunk_phases_[chunk][chunk_next_[chunk]]);
  }
}

void CollectiveRunner::StartPhase(uint32_t phase_index) {
  const auto& phase = schedule_.phases[phase_index];
  phases_[phase_index].started = true;
  if (phase.begin == phase.end) {
    CompletePhase(phase_index);
    return;
  }
  for (uint32_t s = phase.begin; s < phase.end; ++s) {
    if (steps_[s].unmet_deps == 0) StartStep(s);
  }
}

void CollectiveRunner::StartStep(uint32_t s) {
  // A dependency may finish before this step's phase has begun (the planner may order steps
  // across phases); the phase start picks the step up then. Never start a step twice.
  if (steps_[s].started || !phases_[steps_[s].phase].started) return;
  steps_[s].started = true;
  const auto& step = schedule_.steps[s];
  if (!HasRecv(step.kind)) {
    SendFor(s);
    return;
  }
  Message msg;
  msg.peer = step.recv_peer;
  msg.tag = tag_base_ | step.recv_tag;
  msg.bytes = step.recv.length;
  msg.channel = step.channel;
  if (buffer_ != nullptr) {
    scratch_[s] = std::make_unique_for_overwrite<uint8_t[]>(step.recv.length);
    msg.into = scratch_[s].get();
  }
  backend_.Recv(msg, [this, s] { OnReceived(s); });
}

void CollectiveRunner::OnReceived(uint32_t s) {
  const auto& step = schedule_.steps[s];
  bytes_received_ += step.recv.length;
  auto proceed = [this, s] {
    if (HasSend(schedule_.steps[s].kind))
      SendFor(s);
    else
      CompleteStep(s);
  };
  if (buffer_ != nullptr) {
    const uint8_t* incoming = scratch_[s].get();
    if (HasReduce(step.kind))
      Reduce(step.recv, incoming);
    else if (step.recv.length > 0)
      std::memcpy(buffer_->data() + step.recv.offset, incoming, step.recv.length);
    scratch_[s].reset();
  }
  TimeNs cost = HasReduce(step.kind) ? ReductionCost(step.recv.length) : 0;
  if (cost > 0)
    backend_.After(cost, proceed);
  else
    proceed();
}

void CollectiveRunner::SendFor(uint32_t s) {
  const auto& step = schedule_.steps[s];
  const collective::ByteRange& range = step.kind == StepKind::kSend ? step.send : step.recv;
  Message msg;
  msg.peer = step.send_peer;
  msg.tag = tag_base_ | step.send_tag;
  msg.bytes = range.length;
  msg.channel = step.channel;
  // One flow per chunk: its slices and channels share the pair's bandwidth in simulation,
  // while concurrent chunks stay independent, as in ASTRA-sim. tag_base_'s low 32 bits are 0.
  msg.flow = tag_base_ | (uint64_t{schedule_.phases[steps_[s].phase].chunk} + 1);
  if (buffer_ != nullptr) msg.data = buffer_->data() + range.offset;
  auto post = [this, s, msg] {
    bytes_sent_ += msg.bytes;
    backend_.Send(msg, [this, s] { CompleteStep(s); });
  };
  if (backend_.modelled() && costs_.endpoint_delay_ns > 0)
    backend_.After(costs_.endpoint_delay_ns, post);
  else
    post();
}

void CollectiveRunner::CompleteStep(uint32_t s) {
  for (uint32_t d : steps_[s].dependents) {
    if (--steps_[d].unmet_deps == 0) StartStep(d);
  }
  uint32_t p = steps_[s].phase;
  if (--phases_[p].remaining_steps == 0) CompletePhase(p);
}

void CollectiveRunner::CompletePhase(uint32_t p) {
  auto finish = [this, p] {
    const auto& phase = schedule_.phases[p];
    --active_in_dim_[phase.dim];
    ++chunk_next_[phase.chunk];
    AdmitWaiting(phase.dim);
    EnterNextPhase(phase.chunk);
  };
  if (backend_.modelled() && costs_.endpoint_delay_ns > 0)
    backend_.After(costs_.endpoint_delay_ns, finish);
  else
    finish();
}

TimeNs CollectiveRunner::ReductionCost(Bytes bytes) const {
  if (!backend_.modelled() || costs_.local_mem_bw <= 0) return 0;
  // ASTRA-sim: three memory passes (read, read, write), each truncated to whole ns.
  // Saturates for sizes past int64 ns; the simulator then refuses the event.
  return SaturatingMul(TimeNs{3}, SaturatingTimeNs(static_cast<double>(bytes) / costs_.local_mem_bw));
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
