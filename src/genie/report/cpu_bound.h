// CPU-bound iterations: where genie's own machine, not the network, set a measured step. A rank
// whose thread waited for a core (RankSummary::cpu_wait_ns, record/cpu_wait.h) for more than a
// share of the iteration's step woke late from its compute sleeps and read its sockets late:
// that step is the host CPU's (ranks outnumbering cores, another program, a stolen vCPU), so
// a slowdown there is not the network's and a prediction cannot be held against it. The
// summary, results.json ("cpu_bound") and the comparison say so. Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/cpu_wait.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

struct CpuBoundIteration {
  int iteration = 0;
  int rank = -1;        // the rank that waited longest
  TimeNs wait_ns = 0;   // its wait for a core in the iteration
  TimeNs step_ns = 0;   // the iteration's step (first start to last finish)
  int ranks_over = 0;   // ranks that waited more than the threshold share of the step
  double fraction() const { return step_ns > 0 ? static_cast<double>(wait_ns) / step_ns : 0; }
};

// Measured iterations (warm-ups skipped) in which some rank waited for a core for more than
// `threshold` of the step, in iteration order. Empty when no rank recorded its wait (a
// simulation, an older genie, a kernel without schedstat).
std::vector<CpuBoundIteration> CpuBoundIterations(
    const std::vector<record::RankSummary>& ranks,
    double threshold = record::kNotableCpuWaitFraction);

// The longest wait for a core any rank had in any measured iteration, as a share of that
// iteration's step (0 without records): what a healthy run's summary reports.
double WorstCpuWaitFraction(const std::vector<record::RankSummary>& ranks);

// results.json's "cpu_bound": {"threshold", "iterations": [{iteration, rank, wait_ns,
// step_ns, fraction, ranks_over}]}; null when `bound` is empty.
nlohmann::json CpuBoundJson(const std::vector<CpuBoundIteration>& bound,
                            double threshold = record::kNotableCpuWaitFraction);

// "# CPU: ..." lines for the summary: nothing when no rank recorded its wait; one line saying
// the worst share when no iteration is CPU-bound; otherwise which iterations, how much, and
// that their time is not the network's.
void PrintCpuBound(std::ostream& out, const std::vector<record::RankSummary>& ranks);

}  // namespace genie::report
