#include "genie/driver/simulate.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <filesystem>
#include <iostream>

#include "genie/compute/faulted_compute.h"
#include "genie/driver/simulation.h"
#include "genie/record/output_guard.h"
#include "genie/record/recorder.h"
#include "genie/record/run_folder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/provenance.h"
#include "genie/report/results_json.h"
#include "genie/report/streamed_outputs.h"

namespace genie::driver {

// sys[r] lines printed at most (plus the ranks of interest) unless --all-ranks: ASTRA-sim's
// equality scripts run up to 64 ranks; a 4,096-rank run's lines are a page of noise.
constexpr size_t kMaxSysLines = 64;
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

Result<std::vector<int>> ParseRankList(const std::string& text, int world_size) {
  std::vector<int> ranks;
  std::string_view rest = text;
  auto number = [&](std::string_view item) -> Result<int> {
    int v = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 0 || v >= world_size) {
      return Status::InvalidArgument("--ranks-of-interest: '" + std::string(item) +
                                     "' is not a rank of this workload (0.." +
                                     std::to_string(world_size - 1) + ")");
    }
    return v;
  };
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (item.empty()) continue;
    const size_t dash = item.find('-');
    GENIE_ASSIGN_OR_RETURN(int first, number(item.substr(0, dash)));
    int last = first;
    if (dash != std::string_view::npos) {
      GENIE_ASSIGN_OR_RETURN(last, number(item.substr(dash + 1)));
    }
    if (last < first) {
      return Status::InvalidArgument("--ranks-of-interest: range '" + std::string(item) +
                                     "' ends before it starts");
    }
    for (int r = first; r <= last; ++r) ranks.push_back(r);
  }
  return ranks;
}

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
  if (setup->network_faults > 0) {
    spdlog::warn("--faults {}: its {} network fault(s) (link:) are not simulated; only its "
                 "compute faults (rank:) are",
                 f.setup.faults, setup->network_faults);
  }
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
  std::vector<int> interest;
  if (!f.ranks_of_interest.empty()) {
    auto parsed = ParseRankList(f.ranks_of_interest, setup->world_size());
    if (!parsed.ok()) {
      std::cerr << "genie simulate: " << parsed.status().message() << "\n";
      return 2;
    }
    interest = std::move(parsed).value();
    run_info["ranks_of_interest"] = interest;
  }
  // Ops go only to an output that shows them, and then only the ranks of interest's. They are
  // not held in memory: each is streamed as it finishes (one JSON line), and results.json and
  // the Chrome trace are written from that stream at the end (report/streamed_outputs.h) —
  // also when the run fails part-way; a run killed part-way leaves the stream, which
  // `genie results show` reads.
  const bool outputs = !f.output.empty() || !f.trace_out.empty();
  std::string stream_path;
  // The output folder is claimed as `genie run` claims its own (record/run_folder.h), and no
  // output may replace an input, a results file or a folder another job holds.
  std::unique_ptr<record::OutputFolderClaim> claim;
  record::OutputPlan plan;
  plan.inputs = setup->files.rank_paths;
  for (const std::string& in : {setup->files.comm_group_path, f.setup.system_path,
                                f.setup.network_path, f.setup.memory_path, f.setup.faults}) {
    plan.inputs.push_back(in);
  }
  plan.outputs = {f.trace_out};
  if (!f.output.empty()) {
    Status made = record::MakeOutputFolder(f.output);
    if (!made.ok()) {
      std::cerr << "genie simulate: " << made.message() << "\n";
      return ExitCodeFor(made);
    }
    auto claimed = record::ClaimOutputFolder(f.output, "simulate", /*world_size=*/1);
    if (!claimed.ok()) {
      std::cerr << "genie simulate: " << claimed.status().message() << "\n";
      return ExitCodeFor(claimed.status());
    }
    claim = std::move(*claimed);
    plan.own_folders = {f.output};
    stream_path = f.output + "/simulate.jsonl";
    plan.results = {stream_path, f.output + "/results.json"};
  } else if (outputs) {
    stream_path = f.trace_out + ".jsonl";  // scratch, removed once the trace is written
    plan.outputs.push_back(stream_path);
  }
  if (Status checked = record::CheckOutputs(plan); !checked.ok()) {
    std::cerr << "genie simulate: " << checked.message() << "\n";
    return ExitCodeFor(checked);
  }
  auto recorder = record::Recorder::Create(stream_path, run_info, /*keep_ops=*/false);
  if (!recorder.ok()) {
    std::cerr << "genie simulate: " << recorder.status().message() << "\n";
    return 1;
  }
  if (!interest.empty()) (*recorder)->KeepOpsOf(interest);
  auto stats = Simulate(*setup, *setup->network, *model, recorder->get(),
                        SimulatedIterations(f.iterations, f.warmup));
  if (stats.ok() && setup->exec.compute_faults) {
    run_info["compute_faults"] = compute::ToJson(stats->compute_fault_events);
  }
  // Written also when the simulation failed: what ran until then.
  auto write_outputs = [&]() -> int {
    if (!outputs) return 0;
    Status st = (*recorder)->Close();
    report::StreamedOutputs out;
    if (!f.output.empty()) out.results_path = f.output + "/results.json";
    out.trace_path = f.trace_out;
    if (st.ok()) {
      auto written = report::WriteStreamedOutputs(stream_path, run_info, (*recorder)->ranks(), out);
      st = written.status();
      if (written.ok()) {
        spdlog::debug("outputs: {} ops, {} sorted runs spilled", written->ops,
                      written->spilled_runs);
      }
    }
    std::error_code ec;
    if (f.output.empty()) std::filesystem::remove(stream_path, ec);
    if (!st.ok()) {
      std::cerr << "genie simulate: " << st.message() << "\n";
      return 1;
    }
    if (!out.results_path.empty()) {
      spdlog::info("results written to {}{}", out.results_path,
                   stats.ok() ? "" : " (up to the failure)");
    }
    return 0;
  };
  if (!stats.ok()) {
    write_outputs();
    std::cerr << "genie simulate: " << stats.status().message() << "\n";
    return ExitCodeFor(stats.status());
  }
  if (!f.quiet) {
    if (f.all_ranks)
      report::PrintAstraSimLines(std::cout, stats->ranks);
    else
      report::PrintAstraSimLinesBounded(std::cout, stats->ranks, kMaxSysLines, interest);
  }
  spdlog::info("simulated {} messages ({} bytes) in {} events, {} ns of simulated time",
               stats->messages, stats->bytes, stats->events, stats->end_ns);
  if (stats->memory_waited > 0 && setup->exec.memory.has_value()) {
    spdlog::info("remote memory: {} accesses waited in {}'s queues, {} ns in all",
                 stats->memory_waited, config::MemoryTypeName(setup->exec.memory->type),
                 stats->memory_wait_ns);
  }
  return write_outputs();
}

}  // namespace genie::driver
