// `genie synth`: write the training step of a model on a parallel layout as Chakra traces, one
// file per rank plus the comm-group file (docs/synth.md).
//   genie synth -o W --model llama3-70b --tp 8 --pp 4 --dp 32 --microbatches 16 --gpu h100
//   genie synth -o W --model stg-gpt --dp 2 --tp 2 --pp 2 --microbatches 2
#include <chrono>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include "genie/common/units.h"
#include "genie/synth/writer.h"
#include "tools/genie/command.h"
#include "tools/genie/synth_flags.h"

GENIE_COMMAND(synth, "Write a model's training step on a parallel layout as Chakra traces") {
  struct Args {
    genie::cli::SynthArgs synth;
    std::string output;
    bool gzip = false;
    int jobs = 2;
  };
  auto a = std::make_shared<Args>();
  app.add_option("--output,-o", a->output, "Output folder: workload.<rank>.et and workload.json");
  genie::cli::AddSynthFlags(app, a->synth);
  app.add_flag("--gzip", a->gzip, "gzip-compress each rank's file");
  app.add_option("--jobs,-j", a->jobs, "Writer threads")->capture_default_str();

  return [a]() -> int {
    using namespace genie::synth;
    if (a->synth.list) {
      std::cout << "models:";
      for (const auto& n : ModelPresetNames()) std::cout << " " << n;
      std::cout << "\ngpus:";
      for (const auto& n : GpuPresetNames()) std::cout << " " << n;
      std::cout << "\n";
      return 0;
    }
    auto fail = [](const std::string& m) {
      std::cerr << "genie synth: " << m << "\n";
      return 2;
    };
    if (a->output.empty()) return fail("--output DIR is required");
    ModelSpec m;
    GpuSpec gpu_spec;
    auto job = genie::cli::MakeSynthJob(a->synth, &m, &gpu_spec);
    if (!job.ok()) return fail(job.status().message());
    const GpuSpec* gpu = &gpu_spec;
    const Layout& l = a->synth.layout;
    WriteOptions o;
    o.dir = a->output;
    o.gzip = a->gzip;
    o.jobs = a->jobs;
    auto start = std::chrono::steady_clock::now();
    auto report = WriteWorkload(*job, o);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!report.ok()) {
      std::cerr << "genie synth: " << report.status().message() << "\n";
      return 1;
    }
    std::cout << "synth " << m.name << " (" << ConventionName(m.convention) << " conventions) dp "
              << l.dp << " tp " << l.tp << " pp " << l.pp << " sp " << l.sp << " ep " << l.ep
              << " zero " << l.zero << ", " << l.microbatches << " micro-batch(es) of "
              << job->replica_tokens() << " tokens per replica, " << gpu->name << "\n"
              << "wrote " << report->ranks << " rank(s), " << report->nodes << " nodes, "
              << a->output << "/workload.{0.." << report->ranks - 1 << "}.et"
              << (a->gzip ? " (gzip)" : "") << " and " << report->comm_group_path << " in "
              << seconds << " s\n";
    return 0;
  };
}
