// Planning time: a 1 GiB all-reduce at 1,024 ranks with every algorithm — one rank's Plan()
// (what a rank process pays the first time it runs a collective) and all 1,024 schedules (what
// `genie plan` and the simulator pay). Also a ring all-to-all, whose schedule grows as N^2/2
// messages. And what a real rank pays to start a small collective it has run before: planned
// and compacted again (before runtime/plan_memo.h), or taken from its PlanMemo.
#include <benchmark/benchmark.h>

#include "genie/collective/planner.h"
#include "genie/runtime/compact_chunk.h"
#include "genie/runtime/plan_memo.h"

namespace {

using genie::collective::Algorithm;
using genie::collective::CollectiveSpec;

CollectiveSpec Spec(Algorithm a, genie::CollectiveType type, int ranks, int channels) {
  CollectiveSpec s;
  s.type = type;
  s.size = genie::Bytes{1} << 30;
  for (int r = 0; r < ranks; ++r) s.group.push_back(r);
  s.options.algorithms = {a};
  s.options.channels = channels;
  return s;
}

void BM_PlanOneRank(benchmark::State& state, Algorithm a) {
  const CollectiveSpec spec =
      Spec(a, genie::CollectiveType::kAllReduce, 1024, static_cast<int>(state.range(0)));
  size_t steps = 0;
  for (auto _ : state) {
    auto s = genie::collective::Plan(spec, 517);
    steps = s->steps.size();
    benchmark::DoNotOptimize(s);
  }
  state.counters["steps"] = static_cast<double>(steps);
}

void BM_PlanAllRanks(benchmark::State& state, Algorithm a) {
  const CollectiveSpec spec = Spec(a, genie::CollectiveType::kAllReduce, 1024, 1);
  for (auto _ : state) {
    auto s = genie::collective::PlanAll(spec);
    benchmark::DoNotOptimize(s);
  }
}

void BM_RingAllToAllOneRank(benchmark::State& state) {
  const CollectiveSpec spec =
      Spec(Algorithm::kRing, genie::CollectiveType::kAllToAll, static_cast<int>(state.range(0)), 1);
  for (auto _ : state) {
    auto s = genie::collective::Plan(spec, 1);
    benchmark::DoNotOptimize(s);
  }
}

// An 8-rank ring all-reduce of 64 KiB (the benchmark's smallest row: 14 steps of 8 KiB).
CollectiveSpec SmallRing() {
  CollectiveSpec s = Spec(Algorithm::kRing, genie::CollectiveType::kAllReduce, 8, 1);
  s.size = 64 << 10;
  return s;
}

void BM_StartSmallPlanned(benchmark::State& state) {
  const CollectiveSpec spec = SmallRing();
  for (auto _ : state) {
    auto s = genie::collective::Plan(spec, 3);
    auto c = genie::runtime::Compact(*s, 3, 8, nullptr);
    benchmark::DoNotOptimize(c);
  }
}

void BM_StartSmallMemo(benchmark::State& state) {
  const CollectiveSpec spec = SmallRing();
  genie::runtime::PlanMemo memo;
  for (auto _ : state) {
    auto c = memo.Get(spec, 3, 8);
    benchmark::DoNotOptimize(c);
  }
}

BENCHMARK(BM_StartSmallPlanned)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_StartSmallMemo)->Unit(benchmark::kMicrosecond);

#define PLANNER_BENCH(name, alg)                                                               \
  BENCHMARK_CAPTURE(BM_PlanOneRank, name, alg)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond); \
  BENCHMARK_CAPTURE(BM_PlanAllRanks, name, alg)->Unit(benchmark::kMillisecond);

PLANNER_BENCH(ring, Algorithm::kRing)
PLANNER_BENCH(direct, Algorithm::kDirect)
PLANNER_BENCH(halvingDoubling, Algorithm::kHalvingDoubling)
PLANNER_BENCH(doubleBinaryTree, Algorithm::kDoubleBinaryTree)
PLANNER_BENCH(tree, Algorithm::kTree)
BENCHMARK(BM_RingAllToAllOneRank)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
