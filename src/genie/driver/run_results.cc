#include "genie/driver/run_results.h"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "genie/driver/run.h"
#include "genie/driver/simulation.h"
#include "genie/record/run_folder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/run_streams.h"
#include "genie/report/statistics.h"
#include "genie/report/summary.h"

namespace genie::driver {

void PrintPrediction(const runtime::RunSetup& setup, const std::string& model,
                     const std::vector<record::RankSummary>& ranks, const std::string& which) {
  if (!setup.network) return;
  const sim::NetworkModelKind kind =
      sim::ParseNetworkModelKind(model).value_or(sim::NetworkModelKind::kFlow);
  auto predicted = Simulate(setup, *setup.network, kind, nullptr);
  if (!predicted.ok()) {
    std::cerr << "genie run: prediction failed: " << predicted.status().message() << "\n";
    return;
  }
  auto steps = report::StepTimes(ranks);
  std::vector<TimeNs> measured;
  for (const auto& s : steps) {
    if (s.iteration >= 0) measured.push_back(s.step_ns());
  }
  auto spread = report::SpreadOf(measured);
  const double pred = static_cast<double>(predicted->end_ns);
  std::printf(
      "\nstep time  measured median %s%s   predicted (%s, %s model) %s   "
      "measured/predicted %.2f\n",
      FormatDuration(spread.median).c_str(), which.c_str(), setup.network->path.c_str(),
      sim::NetworkModelName(kind),
      FormatDuration(predicted->end_ns).c_str(),
      pred > 0 ? static_cast<double>(spread.median) / pred : 0.0);
}

int WriteResults(const RunOptions& o, const runtime::RunSetup& setup, const launch::RankEnv& env,
                 const std::string& run_id) {
  // The folder's streams of this run (report/run_streams.h); a rank whose own stream is gone
  // from the folder says so and fails instead of merging nothing.
  auto found = report::FindRunStreams(o.output, env.rank, env.world_size, run_id);
  if (!found.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << found.status().message() << "\n";
    return 1;
  }
  if (!found->writer) return 0;
  const std::vector<int>& here = found->ranks;
  const std::vector<std::string>& streams = found->paths;
  const bool complete = static_cast<int>(here.size()) == env.world_size;
  auto merged = report::MergeStreams(streams);
  if (!merged.ok()) {
    std::cerr << "genie run: " << merged.status().message() << "\n";
    return 1;
  }
  Status st =
      report::WriteJsonFile(o.output + "/results.json",
                            report::BuildResultsJson(merged->run_info, merged->ops, merged->ranks,
                                                     merged->clock_offsets_ns));
  if (!st.ok()) {
    std::cerr << "genie run: " << st.message() << "\n";
    return 1;
  }
  if (!o.trace_out.empty()) {
    st = report::WriteChromeTrace(o.trace_out, merged->ops);
    if (!st.ok()) std::cerr << "genie run: " << st.message() << "\n";
  }
  if (!complete) {
    std::fprintf(stderr,
                 "genie run: rank %d: %s/results.json holds this host's %zu of %d ranks (%d..%d); "
                 "combine every host's output folder with: genie results merge merged.json "
                 "HOST1_DIR HOST2_DIR ...\n",
                 env.rank, o.output.c_str(), here.size(), env.world_size, here.front(),
                 here.back());
    // Every iteration ends in a world barrier, so this host's step times are the job's.
    if (env.rank == 0) {
      PrintPrediction(setup, o.network_model, merged->ranks, " (this host's ranks)");
    }
    return 0;
  }
  // The same lines `genie results show --astra-sim` prints for these results.
  report::PrintAstraSimLines(std::cout, merged->ranks);
  report::PrintSummary(std::cout, merged->ops, merged->ranks);
  const nlohmann::json& info = merged->run_info;
  report::PrintTraffic(std::cout, info.is_object() && info.contains("traffic") ? info["traffic"]
                                                                              : nlohmann::json());
  if (info.is_object() && info.contains("testbed")) {
    report::PrintTestbed(std::cout, info["testbed"], report::FirstStart(merged->ops));
  }
  PrintPrediction(setup, o.network_model, merged->ranks, "");
  return 0;
}

}  // namespace genie::driver
