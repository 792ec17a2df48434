// What a finished real run leaves behind and prints: each rank's stream (rank-R.jsonl in the
// output folder) is merged into results.json by one rank per folder, which also prints
// ASTRA-sim's per-rank lines, the summary, the traffic line, and the prediction for the same
// workload on the modelled network beside the measurement. `genie results show` prints the
// same figures again from the file (PrintRunResults: one implementation for both).
//
// Threading: the process's main thread, after the rank's run has ended.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "genie/launch/rank_env.h"
#include "genie/record/rank_summary.h"
#include "genie/report/attribution.h"
#include "genie/report/localization.h"
#include "genie/report/prediction.h"
#include "genie/report/results_file.h"
#include "genie/runtime/run_setup.h"

namespace genie::driver {

struct RunOptions;

// After the final barrier every rank's stream is complete. Each host (each output folder)
// merges the streams of this run it holds (report/run_streams.h: matched by run id, so an
// earlier run's leftovers are skipped) into results.json, written atomically: rank 0 when it
// sees all of them (one host, or a shared filesystem) with the summary and the prediction;
// otherwise rank 0 and the lowest rank of every other folder merge their own, for `genie
// results merge` to combine. A rank whose own stream is no longer in the folder (replaced or
// emptied mid-run) says so and returns 1. Returns the exit code.
int WriteResults(const RunOptions& options, const runtime::RunSetup& setup,
                 const launch::RankEnv& env, const std::string& run_id);

// The prediction for the same workload on the modelled network (setup.network) with `model`
// (RunOptions::network_model: flow unless asked otherwise), beside the measured median step;
// `which` qualifies the measurement (e.g. " (this host's ranks)").
void PrintPrediction(const runtime::RunSetup& setup, const std::string& model,
                     const std::vector<record::RankSummary>& ranks, const std::string& which);

// The figures of a run as `genie run` prints them at its end and `genie results show` prints
// them again: the summary, the traffic line, the testbed's counters; then `before_comparisons`
// (genie run's prediction line, when it has no --predict), the measurement beside each
// prediction or baseline, the link probes judged, and who slowed each iteration flagged slow
// (report/attribution.h).
void PrintRunResults(std::ostream& out, const report::RunRecords& records,
                     const std::vector<report::Comparison>& compared,
                     const std::optional<report::Localization>& localized,
                     const std::function<void()>& before_comparisons = nullptr,
                     const std::vector<report::IterationAttribution>& attributed = {});

}  // namespace genie::driver
