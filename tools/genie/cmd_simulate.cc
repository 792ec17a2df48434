// genie simulate: the workload on a modelled network (virtual clock), ASTRA-sim compatible. The
// flags fill driver::SimulateOptions; driver/simulate.h does the rest.
#include <spdlog/spdlog.h>

#include "genie/driver/simulate.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"
#include "tools/genie/huge_page_heap.h"
#include "tools/genie/synth_flags.h"

namespace genie::cli {

GENIE_COMMAND(simulate, "Run a workload on a modelled network (ASTRA-sim analytical semantics)") {
  auto f = std::make_shared<driver::SimulateOptions>();
  AddWorkloadFlags(app, f->setup);
  app.add_option("--network,--network-configuration", f->setup.network_path,
                 "ASTRA-sim network.yml (topology, npus_count, bandwidth GB/s, latency ns)");
  AddNetworkModelFlags(app, f->model, f->setup, "default unaware");
  app.add_option("--comm-streams", f->comm_streams,
                 "rank: one communication op in flight per rank (ASTRA-sim); concurrent: every "
                 "ready one starts, as genie run does")
      ->check(CLI::IsMember({"rank", "concurrent"}));
  app.add_option("--faults", f->setup.faults,
                 "Fault schedule (YAML, docs/testbed.md): its compute faults (rank:) slow the "
                 "simulated ranks as they would a real run's; network faults are not modelled")
      ->check(CLI::ExistingFile);
  app.add_option("--output,-o", f->output, "Write results.json into this folder");
  app.add_option("--trace-out", f->trace_out, "Write a Chrome trace (open in Perfetto)");
  app.add_flag("--quiet,-q", f->quiet, "Do not print the per-rank sys[r] lines");
  app.add_flag("--all-ranks", f->all_ranks,
               "Print every rank's sys[r] line (default: past 64 ranks, the first and last 16, "
               "the ranks of interest and min/median/max)");
  app.add_option("--ranks-of-interest", f->ranks_of_interest,
                 "Ranks whose every op is kept in results.json and the Chrome trace, and whose "
                 "sys[r] line is printed (e.g. 0,7,100-103; default every rank's ops)");
  app.add_option("--iterations,-n", f->iterations, "Measured iterations of the whole graph")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", f->warmup, "Warm-up iterations (not in the statistics)")
      ->check(CLI::NonNegativeNumber);
  // A synth description instead of traces (genie synth's flags, docs/synth.md).
  auto synth = std::make_shared<SynthArgs>();
  CLI::Option* model_option = nullptr;
  AddSynthFlags(app, *synth, &model_option);
  app.add_option("--symmetry", f->symmetry,
                 "With --model: auto (ranks equal up to a rotation of dp, tp, sp or ep that the "
                 "network shares are simulated once, exactly) or off (every rank)")
      ->check(CLI::IsMember({"auto", "off"}));
  app.add_flag("!--no-progress", f->progress, "No progress line on long runs");
  app.add_option("--jobs", f->jobs,
                 "A jobs file (genie launch --jobs): every run: job on one network (--network: "
                 "one NPU per host, else the file's testbed), each job's step predicted together "
                 "with its neighbours and alone (flow model unless --network-model)")
      ->check(CLI::ExistingFile);
  return [f, synth, model_option, &app] {
    if (!f->jobs.empty()) {
      f->model_given = app.get_option("--network-model")->count() > 0;
      return driver::RunSimulateJobs(*f);
    }
    if (synth->list) {
      std::cout << "models:";
      for (const auto& n : synth::ModelPresetNames()) std::cout << " " << n;
      std::cout << "\ngpus:";
      for (const auto& n : synth::GpuPresetNames()) std::cout << " " << n;
      std::cout << "\n";
      return 0;
    }
    if (model_option->count() > 0 || !synth->model_file.empty()) {
      if (!f->setup.workload.empty()) {
        std::cerr << "genie simulate: give a workload (traces) or a synth description "
                     "(--model ...), not both\n";
        return 2;
      }
      synth::ModelSpec model;
      synth::GpuSpec gpu;
      auto job = MakeSynthJob(*synth, &model, &gpu);
      if (!job.ok()) {
        std::cerr << "genie simulate: " << job.status().message() << "\n";
        return 2;
      }
      const synth::Layout& l = synth->layout;
      f->synth_name = model.name + " tp" + std::to_string(l.tp) + " pp" + std::to_string(l.pp) +
                      " dp" + std::to_string(l.dp) +
                      (l.sp > 1 ? " sp" + std::to_string(l.sp) : "") +
                      (l.ep > 1 ? " ep" + std::to_string(l.ep) : "") + " on " + gpu.name;
      f->synth = std::make_shared<const synth::Job>(std::move(job).value());
    }
    ReexecWithHugePageHeap(ProcessArgv());
    if (HugePageHeapRequested()) spdlog::info("simulator heap on transparent huge pages");
    return driver::RunSimulate(*f);
  };
}

}  // namespace genie::cli
