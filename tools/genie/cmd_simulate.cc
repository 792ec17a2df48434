// genie simulate: the workload on a modelled network (virtual clock), ASTRA-sim compatible.
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "genie/record/recorder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/provenance.h"
#include "genie/report/results_json.h"
#include "genie/runtime/simulation.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace genie::cli {
namespace {

struct SimulateFlags {
  runtime::SetupFlags setup;
  std::string model = "unaware";
  std::string comm_streams = "rank";
  std::string output;
  std::string trace_out;
  bool quiet = false;
};

int RunSimulate(const SimulateFlags& f) {
  auto setup = runtime::PrepareRun(f.setup);
  if (!setup.ok()) {
    std::cerr << "genie simulate: " << setup.status().message() << "\n";
    return 2;
  }
  if (!setup->network) {
    std::cerr << "genie simulate: no network given: pass --network network.yml (ASTRA-sim's "
                 "analytical format, e.g. ../shared/data/astra-sim-configs/Ring_8npus.yml)\n";
    return 2;
  }
  for (const auto& note : setup->notes) spdlog::info("{}", note);
  if (f.comm_streams == "concurrent") {
    setup->exec.comm_streams = runtime::ExecutorConfig::CommStreams::kConcurrent;
  }
  sim::NetworkModelKind model = f.model == "aware" ? sim::NetworkModelKind::kCongestionAware
                                                   : sim::NetworkModelKind::kCongestionUnaware;
  nlohmann::json run_info = report::Provenance(setup->ToJson());
  run_info["command"] = "simulate";
  run_info["network_model"] = f.model;
  auto recorder = record::Recorder::Create("", run_info);
  if (!recorder.ok()) {
    std::cerr << "genie simulate: " << recorder.status().message() << "\n";
    return 1;
  }
  auto stats = runtime::Simulate(*setup, *setup->network, model, recorder->get());
  if (!stats.ok()) {
    std::cerr << "genie simulate: " << stats.status().message() << "\n";
    return 1;
  }
  if (!f.quiet) report::PrintAstraSimLines(std::cout, stats->ranks);
  if (!f.output.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(f.output, ec);
    const std::string path = f.output + "/results.json";
    Status st = report::WriteResultsJson(path, run_info, (*recorder)->ops(), (*recorder)->ranks());
    if (!st.ok()) {
      std::cerr << "genie simulate: " << st.message() << "\n";
      return 1;
    }
    spdlog::info("results written to {}", path);
  }
  if (!f.trace_out.empty()) {
    Status st = report::WriteChromeTrace(f.trace_out, (*recorder)->ops());
    if (!st.ok()) {
      std::cerr << "genie simulate: " << st.message() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

GENIE_COMMAND(simulate, "Run a workload on a modelled network (ASTRA-sim analytical semantics)") {
  auto f = std::make_shared<SimulateFlags>();
  AddWorkloadFlags(app, f->setup);
  app.add_option("--network,--network-configuration", f->setup.network_path,
                 "ASTRA-sim network.yml (topology, npus_count, bandwidth GB/s, latency ns)");
  app.add_option("--network-model", f->model, "unaware (no contention) or aware (FIFO links)")
      ->check(CLI::IsMember({"unaware", "aware"}));
  app.add_option("--comm-streams", f->comm_streams,
                 "rank: one communication op in flight per rank (ASTRA-sim); concurrent: every "
                 "ready one starts, as genie run does")
      ->check(CLI::IsMember({"rank", "concurrent"}));
  app.add_option("--output,-o", f->output, "Write results.json into this folder");
  app.add_option("--trace-out", f->trace_out, "Write a Chrome trace (open in Perfetto)");
  app.add_flag("--quiet,-q", f->quiet, "Do not print the per-rank sys[r] lines");
  return [f] { return RunSimulate(*f); };
}

}  // namespace genie::cli
