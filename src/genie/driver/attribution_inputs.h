// Attribution's inputs for a finished run (`genie run --predict`): the counterfactual
// predictions of each iteration flagged slow — the healthy expectation E0 again, with a
// recorder, for the trace's compute per rank, and Ec, the same iteration with each rank's
// measured compute (its GPU compute ops' measured durations, report/attribution_evidence.h) and
// its measured first-op delay in place of the trace's — joined with the measurement's other
// evidence (the ops behind Ec, the localisation's findings, the testbed's retransmissions, the
// neighbours' predicted interference when given) into report::Attribute. Also the what-if step
// of each iteration under the run's --faults compute faults.
//
// Nothing here reads the fault schedule to decide a cause: the what-if is reported beside the
// measurement, never used by the attribution.
//
// Threading: the writing rank's main thread, after the run (runs simulations).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "genie/config/network_config.h"
#include "genie/driver/simulation.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"
#include "genie/record/recorder.h"
#include "genie/report/attribution.h"
#include "genie/report/localization.h"
#include "genie/report/prediction.h"
#include "genie/runtime/run_setup.h"
#include "genie/sim/network_model.h"

namespace genie::driver {

// At most this many flagged iterations are attributed (two simulations each), the first ones.
inline constexpr size_t kAttributedMax = 64;

struct AttributionRun {
  const runtime::RunSetup& setup;
  const config::NetworkConfig& network;
  sim::NetworkModelKind model;
  // Each measured iteration's conditions (start skew, idle time, issue order), by 0-based
  // iteration, as the per-iteration prediction had them.
  const std::map<int, MeasuredIteration>& measured;
  const std::vector<record::OpEvent>& ops;  // the run's, compute ops included
  const std::vector<record::RankSummary>& ranks;
  // Where the ranks' graphs come from and sit, as the per-iteration prediction had it (null:
  // the setup's trace files, the network's own placement).
  const SimulateInput* input = nullptr;
};

// The measured iterations (0-based) in which a rank straggled: its GPU compute beyond the
// trace's plus how late its first op began, against `healthy` (one iteration of the healthy
// prediction, recorded: the trace's compute), exceeds the iteration's median rank's by more
// than `floor` x `healthy_step_ns` (ranks all late alike straggle behind none). The order
// the ranks issued their collectives in there is the straggler's, not the hosts' tie-breaking
// (a rank that stalls issues everything at once after it, its partners as they got ready), so
// its healthy expectation takes the issue rules alone: replayed, the order carries part of the
// straggler's delay into the expectation it is judged against. From the measurement only.
std::set<int> StraggledIterations(int n, const std::vector<record::OpEvent>& ops,
                                  const std::vector<record::RankSummary>& ranks,
                                  const record::Recorder& healthy, TimeNs healthy_step_ns,
                                  double floor = report::kAttributionFloor);

// Every iteration of `compared` slower than its healthy expectation by more than the
// comparison's threshold, attributed. `localized` (may be empty): the run's --localize probe;
// `run_info`: the merged streams' header (its testbed counters); `contention`: per 0-based
// iteration, this job's prediction together with its neighbours and alone (empty: one job).
// With contention the healthy expectation is the alone one. Prints a warning and leaves an
// iteration's Ec out when its simulation fails.
std::vector<report::IterationAttribution> AttributeSlowIterations(
    const AttributionRun& run, const report::Comparison& compared,
    const std::optional<report::Localization>& localized, const nlohmann::json& run_info,
    const std::map<int, report::Contention>& contention = {});

// Per 0-based iteration of `run.measured` (the first kAttributedMax), the step the model
// predicts under the setup's --faults compute faults (empty without any).
std::map<int, TimeNs> WhatIfSteps(const AttributionRun& run);

// The neighbours' interference as results.json's prediction gives it when the run is one job
// of several (genie launch --jobs): per iteration `expected_step_ns` (together) beside
// `expected_alone_step_ns`, the neighbours' names in "neighbours": {"jobs": [...]}; or
// "alone": {"step_ns", "iterations": [{"iteration", "expected_step_ns"}], "neighbours":
// [{"job", "links": [...]}]}. Empty when neither is there (one job).
std::map<int, report::Contention> ContentionFromPrediction(const nlohmann::json& prediction);

}  // namespace genie::driver
