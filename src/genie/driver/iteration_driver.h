// IterationDriver: the iteration policy `genie run` and `genie simulate` share, for one rank on
// its Backend (real or simulated): `warmup` iterations, then `iterations` measured ones, each a
// whole walk of the rank's graph by one Executor. Iterations are separated by a world barrier
// (the planner's barrier collective), so iteration k+1 starts only once every rank has finished
// k — its time is therefore one training step, not skewed by a slow rank's previous step.
// Real ranks also meet at a barrier before the first iteration (processes start at different
// times) and after the last (no rank shuts down while a peer still needs it); simulated ranks
// all start at virtual time 0 and need neither, so a one-iteration simulation is exactly
// ASTRA-sim's.
//
// Owns its Executor and barrier runners. Threading: the Backend's thread only; Start() once.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "genie/collective/collective_spec.h"
#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/record/recorder.h"
#include "genie/runtime/backend.h"
#include "genie/runtime/collective_runner.h"
#include "genie/runtime/executor.h"
#include "genie/workload/rank_graph.h"

namespace genie::driver {

struct IterationPolicy {
  int warmup = 0;
  int iterations = 1;
  bool barrier_first = true;  // a world barrier before the first iteration
  bool barrier_last = true;   // and after the last
  // Simulated only: each rank idles this long after an iteration before the barrier to the
  // next, a stand-in for the time a real run's ranks spend between iterations (a jobs
  // simulation: its neighbours use the link meanwhile). 0: none.
  TimeNs gap_ns = 0;
};

class IterationDriver {
 public:
  IterationDriver(const IterationPolicy& policy, const runtime::ExecutorConfig& config,
                  runtime::Backend& backend, workload::RankGraph& graph,
                  record::Recorder* recorder);
  IterationDriver(const IterationDriver&) = delete;
  IterationDriver& operator=(const IterationDriver&) = delete;

  // Runs every iteration; `done` runs once, with OK after the last one (and its barrier) or
  // with the first error.
  void Start(std::function<void(const Status&)> done);
  // Called after each iteration with its index (negative = warm-up).
  void OnIteration(std::function<void(int iteration)> fn) { on_iteration_ = std::move(fn); }

  bool finished() const { return finished_; }
  int total() const { return policy_.warmup + policy_.iterations; }
  int completed() const { return completed_; }  // iterations finished, warm-ups included
  // True while an iteration's graph walk is in progress (not in a barrier).
  bool in_iteration() const { return in_iteration_; }
  TimeNs iteration_start() const { return iteration_start_; }
  // When the first iteration (warm-up included) started: the rank's first operation; 0 before.
  TimeNs first_start() const { return first_start_; }
  // The world barrier of simulated ranks: the planner's barrier with the default options.
  static collective::CollectiveSpec BarrierSpec(int world_size);
  // The world barrier of real ranks: a token goes once round the ring (everyone has arrived),
  // then rank 0 releases everyone down a tree of fan-out kReleaseFanOut (two hops up to 20
  // ranks, three up to 84; round the ring the last rank was N-1 hops after the first), so they
  // start the next iteration nearly together — 2N-1 zero-byte messages in all. The planner's
  // ring barrier (a zero-byte ring all-reduce) wakes every rank 2(N-1) times, which costs
  // seconds when hundreds of ranks share a few cores; this one wakes each rank twice, and its
  // peers are the ring neighbours, which every ring workload connects anyway, and at most
  // kReleaseFanOut + 1 tree neighbours (the peer set, runtime/peer_set.h, adds them; a small
  // fan-out keeps rank 0 from connecting to every rank of a small job). `rank`'s schedule;
  // pure.
  static constexpr int kReleaseFanOut = 4;
  static collective::Schedule TokenRingBarrier(int world_size, int rank);
  // One more world barrier after the run (every rank must call it); `then` runs on the
  // backend's loop when it is met. Not after a failure.
  void WorldBarrier(std::function<void()> then) { Barrier(std::move(then)); }
  const runtime::Executor& executor() const { return executor_; }
  runtime::Executor& executor() { return executor_; }
  // What this rank waits on right now: the executor's pending ops, or which barrier.
  std::string DescribeWaiting() const;

 private:
  void Barrier(std::function<void()> then);
  void Next();
  void Finish(const Status& st);

  IterationPolicy policy_;
  runtime::Backend& backend_;
  workload::RankGraph& graph_;
  runtime::Executor executor_;
  std::unique_ptr<runtime::CollectiveRunner> barrier_;
  std::function<void(const Status&)> done_;
  std::function<void(int)> on_iteration_;
  int completed_ = 0;
  int started_ = 0;
  uint32_t barriers_ = 0;
  bool in_iteration_ = false;
  bool finished_ = false;
  TimeNs iteration_start_ = 0;
  TimeNs first_start_ = 0;
};

}  // namespace genie::driver
