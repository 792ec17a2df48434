#include "genie/driver/simulate.h"

#include <spdlog/spdlog.h>

#include <malloc.h>

#include <filesystem>
#include <iostream>

#include "genie/driver/simulation.h"
#include "genie/record/recorder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/provenance.h"
#include "genie/report/results_json.h"

namespace genie::driver {
namespace {

// A workload or configuration the simulation cannot accept (traces that disagree, values that
// overflow simulated time, a MEM_LOAD without memory model) exits 2, like a bad flag;
// anything else that stops it (a deadlock report) exits 1.
int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case Status::Code::kInvalidArgument:
    case Status::Code::kNotFound:
    case Status::Code::kUnsupported:
    case Status::Code::kCorruption:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

int RunSimulate(const SimulateOptions& f) {
  // The simulator plans and drops each rank's chunks millions of times: keep freed memory in
  // the process instead of trimming it back to the kernel and faulting it in again (page
  // faults were 9 % of a 1,024-rank run's profile, a tenth of its CPU time in sys).
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  auto setup = runtime::PrepareRun(f.setup);
  if (!setup.ok()) {
    std::cerr << "genie simulate: " << setup.status().message() << "\n";
    return 2;
  }
  if (!setup->network) {
    std::cerr << "genie simulate: no network given: pass --network network.yml (ASTRA-sim's "
                 "analytical format, e.g. examples/loopback.yml)\n";
    return 2;
  }
  for (const auto& note : setup->notes) spdlog::info("{}", note);
  if (f.comm_streams == "concurrent") {
    setup->exec.comm_streams = runtime::ExecutorConfig::CommStreams::kConcurrent;
  }
  const auto model = sim::ParseNetworkModelKind(f.model);
  if (!model) {
    std::cerr << "genie simulate: unknown --network-model " << f.model
              << " (use unaware, aware or flow)\n";
    return 2;
  }
  nlohmann::json run_info = report::Provenance(setup->ToJson());
  run_info["command"] = "simulate";
  run_info["network_model"] = f.model;
  run_info["iterations"] = f.iterations;
  run_info["warmup"] = f.warmup;
  auto recorder = record::Recorder::Create("", run_info);
  if (!recorder.ok()) {
    std::cerr << "genie simulate: " << recorder.status().message() << "\n";
    return 1;
  }
  auto stats = Simulate(*setup, *setup->network, *model, recorder->get(),
                        SimulatedIterations(f.iterations, f.warmup));
  if (!stats.ok()) {
    std::cerr << "genie simulate: " << stats.status().message() << "\n";
    return ExitCodeFor(stats.status());
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

}  // namespace genie::driver
