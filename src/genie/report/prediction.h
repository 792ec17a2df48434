// Measured beside expected, per iteration: each measured iteration's step time and its
// per-collective-type bus bandwidth are put beside what was expected of them — the flow model's
// prediction for the same workload on the same network (`genie run --predict`) or an earlier
// healthy run's results (`--baseline`) — and whatever is slower than expected by more than a
// threshold is flagged "SLOW". Pure (no I/O but the printer's stream); any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"
#include "genie/report/ops_behind.h"
#include "genie/report/statistics.h"

namespace genie::report {

// The default --flag-threshold: an iteration (or op) is slow when it takes more than 1.25x what
// was expected. Healthy runs on a star:4 testbed at 400 Mbit/s measured 0.98–1.06x the flow
// model's step (docs/prediction.md); a degraded NIC makes the step several times slower.
inline constexpr double kDefaultFlagThreshold = 0.25;

// What one iteration should take: a step time and, per collective type, a bus bandwidth.
struct Expectation {
  std::string source;  // "flow model (network.yml)" or "baseline OLD/results.json"
  TimeNs step_ns = 0;
  std::vector<TypeRow> types;  // busbw per type; a type missing here is not compared
  // The step of one measured iteration, where it was predicted on its own (the model starting
  // each rank when the measured one started); other iterations expect step_ns.
  std::map<int, TimeNs> step_ns_of_iteration;
  // What bbr's PROBE_RTT, placed where the run had it, adds to an iteration's own step (absent:
  // none placed).
  std::map<int, TimeNs> probe_ns_of_iteration;
};

// The flow model's (or any simulation's) one iteration: its step and its ops' busbw.
Expectation ExpectationFromSimulation(std::string source, TimeNs step_ns,
                                      const std::vector<record::OpEvent>& ops);
// An earlier run's results.json: the median of its measured step times and its per-type busbw.
Result<Expectation> ExpectationFromResults(std::string source, const nlohmann::json& results);

struct OpComparison {
  std::string type;
  double measured_busbw_gbps = 0;
  double expected_busbw_gbps = 0;
  double slowdown = 0;  // expected / measured busbw (> 1: slower than expected)
  bool slow = false;
};

struct IterationComparison {
  int iteration = 0;
  TimeNs measured_ns = 0;
  TimeNs expected_ns = 0;
  double ratio = 0;  // measured / expected step (> 1: slower than expected)
  bool slow = false;
  std::vector<OpComparison> ops;
  // The ops furthest behind this iteration's own prediction (OpsBehind), most first; empty for
  // a baseline and for iterations past those predicted one by one.
  std::vector<OpBehind> behind;
  // The step the model predicts with the run's --faults compute faults (what-if; 0: none given).
  // The expectation above is the healthy one, so a straggler is flagged and then attributed.
  TimeNs what_if_ns = 0;
  // CPU-bound (report/cpu_bound.h): the longest wait for a core a rank had in this iteration,
  // as a share of its step, when above the threshold; 0 otherwise. Its time is genie's own
  // machine's as much as the network's, so the table marks it and the attribution keeps the
  // network out of it.
  double cpu_wait_fraction = 0;
  // TCP retransmission timeouts the hosts counted in this iteration (iteration_timeouts.h):
  // each a stall of 200 ms or more that the model, without losses, does not predict.
  int64_t tcp_timeouts = 0;
  // bbr's PROBE_RTT in this iteration (iteration_probe_rtt.h): busy connections that entered
  // it and their time in it, summed; the transport's own pause, which the expectation places
  // where it was (driver/run_results.cc).
  int64_t probe_rtt_episodes = 0;
  TimeNs probe_rtt_ns = 0;
};

struct Comparison {
  std::string source;
  // What the reader should know about the expectation, e.g. that the calibration it used was
  // measured under other network settings than the run's (report/network_settings.h).
  std::vector<std::string> notes;
  // The network settings the prediction's calibration was measured under (summary; empty: none
  // known), beside the run's own in results.json's network_settings.
  std::map<std::string, std::string> calibration_settings;
  double threshold = kDefaultFlagThreshold;
  std::vector<IterationComparison> iterations;  // measured iterations, in order
  int flagged = 0;                              // iterations flagged slow
};

// Per measured iteration of `ops`/`ranks`: slow when ratio (or an op's slowdown) > 1 + threshold.
Comparison Compare(const std::vector<record::OpEvent>& ops,
                   const std::vector<record::RankSummary>& ranks, const Expectation& expected,
                   double threshold);

// The ops behind the model kept per iteration (results.json), and printed over the run.
inline constexpr size_t kOpsBehindKept = 10;
inline constexpr size_t kOpsBehindPrinted = 5;

// The table: iteration, measured, expected, ratio, per-type busbw measured/expected, "SLOW";
// then the kOpsBehindPrinted ops furthest behind over the iterations (FormatOpsBehind).
void PrintComparison(std::ostream& out, const Comparison& comparison);
// One row per iteration and collective type (an iteration without comm ops: one row, type
// empty): iteration,measured_step_ns,expected_step_ns,ratio,type,measured_busbw_gbps,
// expected_busbw_gbps,slow — with a header line.
std::string ToCsv(const Comparison& comparison);
// results.json's "prediction" object, and back (`genie results show`); a malformed object
// reads as an empty comparison.
nlohmann::json ToJson(const Comparison& comparison);
Comparison ComparisonFromJson(const nlohmann::json& j);

}  // namespace genie::report
