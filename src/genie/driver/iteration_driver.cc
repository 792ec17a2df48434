#include "genie/driver/iteration_driver.h"

#include "genie/collective/planner.h"

namespace genie::driver {
namespace {

// Bit 62 of a tag is left free by the Executor; iteration barriers live there.
constexpr uint64_t kBarrierTagBit = 1ull << 62;

}  // namespace

IterationDriver::IterationDriver(const IterationPolicy& policy,
                                 const runtime::ExecutorConfig& config, runtime::Backend& backend,
                                 workload::RankGraph& graph, record::Recorder* recorder)
    : policy_(policy), backend_(backend), graph_(graph), executor_(graph, config, backend, recorder) {}

void IterationDriver::Start(std::function<void(const Status&)> done) {
  done_ = std::move(done);
  if (policy_.barrier_first) {
    Barrier([this] { Next(); });
  } else {
    Next();
  }
}

collective::CollectiveSpec IterationDriver::BarrierSpec(int world_size) {
  collective::CollectiveSpec spec;
  spec.type = CollectiveType::kBarrier;
  spec.group.resize(static_cast<size_t>(world_size));
  for (int r = 0; r < world_size; ++r) spec.group[static_cast<size_t>(r)] = r;
  return spec;
}

collective::Schedule IterationDriver::TokenRingBarrier(int world_size, int rank) {
  using collective::Step;
  using collective::StepKind;
  collective::Schedule s;
  s.rank = rank;
  s.group_index = rank;
  const int n = world_size;
  if (n > 1) {
    const int left = (rank + n - 1) % n, right = (rank + 1) % n;
    constexpr uint32_t kToken = 0, kRelease = 1;  // tags, per ordered pair
    auto step = [&](StepKind kind, int from, int to, uint32_t tag, std::vector<uint32_t> deps) {
      Step st;
      st.kind = kind;
      st.recv_peer = collective::HasRecv(kind) ? from : -1;
      st.send_peer = collective::HasSend(kind) ? to : -1;
      st.recv_tag = st.send_tag = tag;
      st.deps = std::move(deps);
      s.steps.push_back(std::move(st));
    };
    // The token goes round the ring: rank 0 holds it again once everyone has arrived.
    if (rank == 0) {
      step(StepKind::kSend, -1, right, kToken, {});
      step(StepKind::kRecv, left, -1, kToken, {0});
    } else {
      step(StepKind::kRecvCopySend, left, right, kToken, {});
    }
    // The release goes down a tree of fan-out kReleaseFanOut from rank 0 (children of i:
    // i*F+1 .. i*F+F), each rank passing it on before it starts: log_F(N) hops from the first
    // rank released to the last. Sent round the ring, the release reached the last rank N-1
    // hops after the first (each a wake-up: ~0.1 ms on a busy testbed, 0.7 ms in all at 8
    // hosts), time the measured step (last finish - first start) counted and no rank used.
    const uint32_t got = static_cast<uint32_t>(s.steps.size()) - 1;  // the token's step
    std::vector<uint32_t> after = {got};
    if (rank > 0) {
      step(StepKind::kRecv, (rank - 1) / kReleaseFanOut, -1, kRelease, {got});
      after = {static_cast<uint32_t>(s.steps.size()) - 1};
    }
    for (int c = rank * kReleaseFanOut + 1; c <= rank * kReleaseFanOut + kReleaseFanOut && c < n;
         ++c) {
      step(StepKind::kSend, -1, c, kRelease, after);
    }
  }
  collective::Phase phase;
  phase.op = CollectiveType::kBarrier;
  phase.end = static_cast<uint32_t>(s.steps.size());
  s.phases.push_back(phase);
  return s;
}

void IterationDriver::Barrier(std::function<void()> then) {
  Result<collective::Schedule> schedule = TokenRingBarrier(backend_.world_size(), backend_.rank());
  if (backend_.modelled()) {
    schedule = collective::Plan(BarrierSpec(backend_.world_size()), backend_.rank());
  }
  if (!schedule.ok()) {
    Finish(schedule.status());
    return;
  }
  const uint64_t tag = kBarrierTagBit | (static_cast<uint64_t>(barriers_++) << 32);
  barrier_ = std::make_unique<runtime::CollectiveRunner>(
      backend_, std::move(schedule).value(), tag, runtime::LocalCosts{}, 0,
      collective::SchedulingPolicy::kFifo, nullptr, std::move(then));
  barrier_->Start();
}

void IterationDriver::Next() {
  if (started_ == total()) {
    Finish(Status::Ok());
    return;
  }
  const int iteration = started_ - policy_.warmup;  // negative = warm-up
  if (started_ > 0) graph_.Reset();
  ++started_;
  in_iteration_ = true;
  iteration_start_ = backend_.Now();
  if (first_start_ == 0) first_start_ = iteration_start_;
  executor_.Start(iteration, [this, iteration](const Status& st) {
    in_iteration_ = false;
    if (!st.ok()) {
      Finish(st);
      return;
    }
    ++completed_;
    if (on_iteration_) on_iteration_(iteration);
    const bool last = started_ == total();
    if (last && !policy_.barrier_last) {
      Finish(Status::Ok());
    } else if (policy_.gap_ns > 0 && !last) {
      backend_.After(policy_.gap_ns, [this] { Barrier([this] { Next(); }); });
    } else {
      Barrier([this] { Next(); });
    }
  });
}

void IterationDriver::Finish(const Status& st) {
  if (finished_) return;
  finished_ = true;
  if (done_) done_(st);
}

std::string IterationDriver::DescribeWaiting() const {
  if (in_iteration_) return executor_.DescribePending();
  if (completed_ == 0) return "  the barrier before the first iteration\n";
  return "  the barrier after iteration " + std::to_string(completed_) + " of " +
         std::to_string(total()) + " (warm-ups included)\n";
}

}  // namespace genie::driver
