// Simulator throughput: events per second of the network models at 1,024 ranks (the two
// analytical ASTRA-sim models and the flow model, whose max-min recomputation is incremental).
// Traffic is a chain of ring steps (each rank sends m bytes to a neighbour, and sends the next
// step once it has received the previous one) — the shape of a ring all-reduce; with
// 2 x (N - 1) = 2,046 steps it *is* a 1,024-rank ring all-reduce of one chunk.
//   build/<dir>/bench/sim_network_bench [--benchmark_filter=Aware]
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "genie/config/network_config.h"
#include "genie/sim/flow_model.h"
#include "genie/sim_backend/sim_backend.h"

namespace genie::runtime {
namespace {

using config::TopologyKind;
using sim_backend::SimBackend;

config::NetworkConfig Switch1024() {
  return {"switch-1024", {TopologyKind::kSwitch}, {1024}, {400.0}, {936.25}};
}
config::NetworkConfig Hgx8x128() {  // 8 NPUs per switch, 128 nodes on a second switch tier
  return {"hgx-8x128", {TopologyKind::kSwitch, TopologyKind::kSwitch}, {8, 128},
          {400.0, 50.0}, {936.25, 2000.0}};
}
config::NetworkConfig Ring1024() {
  return {"ring-1024", {TopologyKind::kRing}, {1024}, {50.0}, {500.0}};
}

// Every rank runs `steps` ring steps to rank + stride (mod N); returns events executed. With
// `stagger`, rank r waits 10 + (7r mod 13) ns between steps instead of 10, so that ranks start
// their messages at different ns (the flow model then settles them one by one, which a
// global recomputation would make quadratic).
uint64_t RunRingSteps(SimBackend* sim, int steps, int stride, Bytes bytes, bool stagger) {
  const int n = sim->world_size();
  struct Ctx {
    SimBackend* sim;
    int n, steps, stride;
    Bytes bytes;
    bool stagger;
    void Step(int r, int s) {
      runtime::Backend& b = sim->ForRank(r);
      runtime::Message out;
      out.peer = (r + stride) % n;
      out.tag = static_cast<uint64_t>(s);
      out.bytes = bytes;
      b.Send(out, [] {});
      runtime::Message in;
      in.peer = (r + n - stride) % n;
      in.tag = static_cast<uint64_t>(s);
      in.bytes = bytes;
      b.Recv(in, [this, r, s] {
        const TimeNs gap = stagger ? 10 + (7 * r) % 13 : 10;
        if (s + 1 < steps) sim->ForRank(r).After(gap, [this, r, s] { Step(r, s + 1); });
      });
    }
  } ctx{sim, n, steps, stride, bytes, stagger};
  for (int r = 0; r < n; ++r) ctx.Step(r, 0);
  return sim->Run();
}

double PeakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void RingSteps(benchmark::State& state, config::NetworkConfig net, sim::NetworkModelKind kind,
               int stride, bool stagger = false) {
  const int steps = static_cast<int>(state.range(0));
  uint64_t events = 0, messages = 0, recomputations = 0, flows_recomputed = 0;
  TimeNs simulated = 0;
  for (auto _ : state) {
    auto sim = SimBackend::Create(net, kind);
    if (!sim.ok()) {
      state.SkipWithError(sim.status().ToString().c_str());
      return;
    }
    events += RunRingSteps(sim->get(), steps, stride, 1024, stagger);  // 1 MiB / 1,024 ranks
    messages += (*sim)->counters().messages_delivered;
    simulated = (*sim)->Now();
    if (kind == sim::NetworkModelKind::kFlow) {
      const auto& flow = static_cast<const sim::FlowModel&>((*sim)->network());
      recomputations += flow.recomputations();
      flows_recomputed += flow.flows_recomputed();
    }
  }
  if (recomputations > 0) {
    // Flows whose rate was recomputed, per message: 1 = each flow once, when it starts (a
    // global recomputation would redo every flow in flight at each start and end).
    state.counters["flows_recomputed/msg"] =
        static_cast<double>(flows_recomputed) / static_cast<double>(messages);
    state.counters["recomputes/msg"] =
        static_cast<double>(recomputations) / static_cast<double>(messages);
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events),
                                                  benchmark::Counter::kIsRate);
  state.counters["msgs/s"] = benchmark::Counter(static_cast<double>(messages),
                                                benchmark::Counter::kIsRate);
  state.counters["sim_ns"] = static_cast<double>(simulated);
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

BENCHMARK_CAPTURE(RingSteps, Aware_Switch1024, Switch1024(), sim::NetworkModelKind::kCongestionAware, 1)
    ->Arg(64)->Arg(2046)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Aware_Ring1024, Ring1024(), sim::NetworkModelKind::kCongestionAware, 1)
    ->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Aware_Hgx8x128_CrossNode, Hgx8x128(),
                  sim::NetworkModelKind::kCongestionAware, 8)
    ->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Unaware_Switch1024, Switch1024(),
                  sim::NetworkModelKind::kCongestionUnaware, 1)
    ->Arg(64)->Arg(2046)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Flow_Switch1024, Switch1024(), sim::NetworkModelKind::kFlow, 1)
    ->Arg(64)->Arg(2046)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Flow_Switch1024_Staggered, Switch1024(), sim::NetworkModelKind::kFlow,
                  1, true)
    ->Arg(64)->Arg(2046)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Flow_Ring1024, Ring1024(), sim::NetworkModelKind::kFlow, 1)
    ->Arg(64)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(RingSteps, Flow_Hgx8x128_CrossNode, Hgx8x128(), sim::NetworkModelKind::kFlow, 8)
    ->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace genie::runtime

BENCHMARK_MAIN();
