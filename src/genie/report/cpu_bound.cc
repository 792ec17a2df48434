#include "genie/report/cpu_bound.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "genie/report/statistics.h"

namespace genie::report {
namespace {

struct Worst {
  int rank = -1;
  TimeNs wait_ns = 0;
  int over = 0;
};

// Per measured iteration: its step, and its longest wait for a core; false when no rank of the
// run recorded a wait (nothing to judge).
bool Waits(const std::vector<record::RankSummary>& ranks, double threshold,
           std::map<int, TimeNs>* steps, std::map<int, Worst>* worst) {
  bool any = false;
  for (const auto& s : ranks) any = any || s.cpu_wait_ns > 0;
  if (!any) return false;
  for (const IterationStep& s : StepTimes(ranks)) {
    if (s.iteration >= 0) (*steps)[s.iteration] = s.step_ns();
  }
  for (const auto& s : ranks) {
    auto step = steps->find(s.iteration);
    if (step == steps->end()) continue;
    Worst& w = (*worst)[s.iteration];
    if (s.cpu_wait_ns > w.wait_ns || w.rank < 0) {
      w.rank = s.rank;
      w.wait_ns = std::max(w.wait_ns, s.cpu_wait_ns);
    }
    if (step->second > 0 && static_cast<double>(s.cpu_wait_ns) > threshold * step->second) {
      ++w.over;
    }
  }
  return true;
}

}  // namespace

std::vector<CpuBoundIteration> CpuBoundIterations(const std::vector<record::RankSummary>& ranks,
                                                  double threshold) {
  std::map<int, TimeNs> steps;
  std::map<int, Worst> worst;
  std::vector<CpuBoundIteration> out;
  if (!Waits(ranks, threshold, &steps, &worst)) return out;
  for (const auto& [iteration, w] : worst) {
    if (w.over == 0) continue;
    out.push_back({iteration, w.rank, w.wait_ns, steps[iteration], w.over});
  }
  return out;
}

double WorstCpuWaitFraction(const std::vector<record::RankSummary>& ranks) {
  std::map<int, TimeNs> steps;
  std::map<int, Worst> worst;
  if (!Waits(ranks, 1.0, &steps, &worst)) return 0;
  double f = 0;
  for (const auto& [iteration, w] : worst) {
    if (steps[iteration] > 0) f = std::max(f, static_cast<double>(w.wait_ns) / steps[iteration]);
  }
  return f;
}

nlohmann::json CpuBoundJson(const std::vector<CpuBoundIteration>& bound, double threshold) {
  if (bound.empty()) return nullptr;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& b : bound) {
    list.push_back({{"iteration", b.iteration},
                    {"rank", b.rank},
                    {"wait_ns", b.wait_ns},
                    {"step_ns", b.step_ns},
                    {"fraction", b.fraction()},
                    {"ranks_over", b.ranks_over}});
  }
  return {{"threshold", threshold}, {"iterations", std::move(list)}};
}

void PrintCpuBound(std::ostream& out, const std::vector<record::RankSummary>& ranks) {
  const std::vector<CpuBoundIteration> bound = CpuBoundIterations(ranks);
  if (bound.empty()) {
    const double worst = WorstCpuWaitFraction(ranks);
    if (worst > 0) {
      out << fmt::format(
          "# CPU: no rank waited for a core more than {:.1f} % of a step (at most {:.1f} %): the "
          "measured times are the network's and the workload's, not this machine's CPU\n",
          100 * record::kNotableCpuWaitFraction, 100 * worst);
    }
    return;
  }
  std::string list;
  const CpuBoundIteration* most = &bound.front();
  for (const auto& b : bound) {
    if (!list.empty()) list += ", ";
    list += std::to_string(b.iteration);
    if (b.fraction() > most->fraction()) most = &b;
  }
  out << fmt::format(
      "# CPU-bound: in {} of the measured iterations ({}) a rank waited for a core more than "
      "{:.1f} % of the step (most: rank {} in iteration {}, {:.1f} % of {:.3f} ms, {} ranks over): "
      "there genie's own machine set the time, not the network; rerun with fewer ranks per core "
      "or on a quieter machine before reading a slowdown there as the network's\n",
      bound.size(), list, 100 * record::kNotableCpuWaitFraction, most->rank, most->iteration,
      100 * most->fraction(), static_cast<double>(most->step_ns) / 1e6, most->ranks_over);
}

}  // namespace genie::report
