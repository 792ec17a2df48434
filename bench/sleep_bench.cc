// Sleep accuracy: how late a precise sleep wakes for 100 µs, 1 ms and 10 ms targets, as
// p50 / p99 / max of (wake time - deadline), for SleepUntil with and without the final spin
// and for EventLoop timers (what RealBackend::After uses). Never early, by construction.
// Usage: sleep_bench [--quick]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "genie/loop/event_loop.h"
#include "genie/loop/precise_sleep.h"

using genie::TimeNs;
using namespace genie::loop;

namespace {

struct Stats {
  double p50, p99, max;
};

Stats Summarise(std::vector<TimeNs> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return static_cast<double>(v[static_cast<size_t>(q * (v.size() - 1))]) / 1e3; };
  return {at(0.5), at(0.99), static_cast<double>(v.back()) / 1e3};
}

std::vector<TimeNs> SampleSleep(TimeNs target, int n, const SleepPolicy& p) {
  std::vector<TimeNs> late;
  late.reserve(n);
  for (int i = 0; i < n; ++i) {
    TimeNs deadline = MonotonicNow() + target;
    SleepUntil(deadline, p);
    late.push_back(MonotonicNow() - deadline);
  }
  return late;
}

std::vector<TimeNs> SampleLoop(TimeNs target, int n, bool spin) {
  SleepPolicy p;
  p.spin = spin;
  auto loop = std::move(EventLoop::Create(p)).value();
  std::vector<TimeNs> late;
  late.reserve(n);
  std::function<void()> next = [&] {
    if (static_cast<int>(late.size()) == n) {
      loop->Quit();
      return;
    }
    TimeNs deadline = MonotonicNow() + target;
    loop->RunAt(deadline, [&, deadline] {
      late.push_back(MonotonicNow() - deadline);
      next();
    });
  };
  next();
  loop->Run();
  return late;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  SetMinimalTimerSlack();
  std::printf("sleep error (wake - deadline), microseconds; %d usable cores\n", UsableCores());
  std::printf("%-26s %8s %6s %9s %9s %9s\n", "mode", "target", "n", "p50", "p99", "max");
  const TimeNs targets[] = {100'000, 1'000'000, 10'000'000};
  for (TimeNs t : targets) {
    int n = static_cast<int>(std::min<TimeNs>(quick ? 100 : 2000, 2'000'000'000 / t / (quick ? 10 : 1)));
    SleepPolicy spin;
    SleepPolicy nospin;
    nospin.spin = false;
    struct Mode {
      const char* name;
      std::function<std::vector<TimeNs>()> run;
    } modes[] = {
        {"SleepUntil spin 200us", [&] { return SampleSleep(t, n, spin); }},
        {"SleepUntil no spin", [&] { return SampleSleep(t, n, nospin); }},
        {"EventLoop timer spin", [&] { return SampleLoop(t, n, true); }},
        {"EventLoop timer no spin", [&] { return SampleLoop(t, n, false); }},
    };
    for (auto& m : modes) {
      Stats s = Summarise(m.run());
      std::printf("%-26s %6lldus %6d %9.2f %9.2f %9.2f\n", m.name,
                  static_cast<long long>(t / 1000), n, s.p50, s.p99, s.max);
    }
  }
  return 0;
}
