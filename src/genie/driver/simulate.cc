#include "genie/driver/simulate.h"

#include <malloc.h>
#include <sys/resource.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

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
#include "genie/sim/symmetry.h"
#include "genie/synth/memory_trace.h"
#include "genie/synth/step.h"

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

// The data-parallel replicas of a synth description folded onto one copy, or why not
// (kUnsupported: the caller simulates every rank and says so).
Result<sim::RankFold> FoldFor(const SimulateOptions& f, const runtime::RunSetup& setup,
                              const std::vector<int>& interest) {
  if (!f.setup.memory_path.empty()) {
    return Status::Unsupported("--memory: remote-memory queues are shared by every rank");
  }
  auto foldable = [](const runtime::CollectiveChoice& c) {
    for (collective::Algorithm a : c.algorithms) {
      if (a != collective::Algorithm::kRing && a != collective::Algorithm::kDirect) return false;
    }
    return true;
  };
  if (setup.exec.compute_faults) {
    // A fault on some ranks' compute makes them unlike their replicas.
    return Status::Unsupported("the --faults schedule has compute faults");
  }
  if (setup.network && setup.network->machine_gbps > 0) {
    // One machine-wide link that every rank's messages share: no replica leaves it alone.
    return Status::Unsupported("the network's machine_bandwidth is shared by every rank");
  }
  for (const auto& [type, choice] : setup.exec.implementations) {
    if (!foldable(choice)) {
      return Status::Unsupported(std::string("the ") + collective::CollectiveOpName(type) +
                                 " algorithm is neither ring nor direct (not rotation-symmetric)");
    }
  }
  // genie synth emits the same graph, up to renaming ranks, for every rank of a pipeline stage:
  // its emitters read no coordinate but the stage (synth/step.cc), so rotating any other
  // coordinate maps one rank's graph onto another's.
  const synth::Job& job = *f.synth;
  std::vector<sim::RankFold::Coordinate> candidates;
  for (synth::Dim d : {synth::Dim::kDp, synth::Dim::kTp, synth::Dim::kSp, synth::Dim::kEp}) {
    if (job.degree(d) < 2) continue;
    candidates.push_back({job.placement().WithCoord(0, d, 1), job.degree(d), synth::DimName(d)});
  }
  if (candidates.empty()) return Status::Unsupported("every rank is a pipeline stage of its own");
  GENIE_ASSIGN_OR_RETURN(sim::Topology topology, sim::Topology::Create(*setup.network));
  std::vector<std::string> notes;
  GENIE_ASSIGN_OR_RETURN(sim::RankFold fold,
                         sim::RankFold::Find(topology, setup.world_size(), candidates, &notes));
  for (const auto& note : notes) spdlog::info("symmetry reduction: {}", note);
  std::vector<std::vector<int>> groups;
  for (const auto& [id, members] : setup.exec.groups.all()) groups.push_back(members);
  GENIE_RETURN_IF_ERROR(fold.CheckGroups(groups));
  for (int r : interest) {
    if (!fold.IsRep(r)) {
      return Status::Unsupported("--ranks-of-interest " + std::to_string(r) +
                                 " is not a representative rank (its ops are not simulated; "
                                 "rank " + std::to_string(fold.Rep(r)) + " stands for it)");
    }
  }
  return fold;
}

// The peak memory a simulation of `ranks` synth ranks needs, from their node counts (one rank
// per pipeline stage emitted to count; ranks of a stage have the same graph up to renaming):
// about kBytesPerNode per node held — measured at 1,024 ranks of llama3-70b: 240 bytes of
// resident graph index and executor state, 90 of in-memory trace.
constexpr double kBytesPerNode = 330;
class CountSink : public synth::NodeSink {
 public:
  Status Write(const ChakraProtoMsg::Node&) override { return Status::Ok(); }
};
Result<double> EstimateBytes(const synth::Job& job, const std::vector<int>& ranks) {
  const int stages = job.degree(synth::Dim::kPp);
  std::vector<uint64_t> nodes(stages, 0);
  for (int s = 0; s < stages; ++s) {
    CountSink sink;
    GENIE_ASSIGN_OR_RETURN(nodes[s],
                           synth::EmitRank(job, job.placement().WithCoord(0, synth::Dim::kPp, s),
                                           &sink));
  }
  double bytes = 64.0 * 1024 * 1024;  // the process and the network model
  for (int r : ranks) bytes += kBytesPerNode * nodes[job.placement().Coord(r, synth::Dim::kPp)];
  return bytes;
}

// MemAvailable from /proc/meminfo, bytes; 0 when unknown.
double AvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
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
  // A synth description: the comm groups and each rank's graph in memory, no files.
  std::optional<synth::MemoryTrace> synth_groups;
  Result<runtime::RunSetup> setup = Status::Internal("no setup");
  if (f.synth) {
    // Every rank's graph keeps its in-memory trace open: one descriptor per rank simulated.
    rlimit open_files{};
    if (getrlimit(RLIMIT_NOFILE, &open_files) == 0 && open_files.rlim_cur < open_files.rlim_max) {
      open_files.rlim_cur = open_files.rlim_max;
      setrlimit(RLIMIT_NOFILE, &open_files);
    }
    auto groups = synth::MemoryTrace::CommGroups(*f.synth);
    if (!groups.ok()) {
      std::cerr << "genie simulate: " << groups.status().message() << "\n";
      return 1;
    }
    synth_groups.emplace(std::move(groups).value());
    trace::WorkloadFiles files;
    files.dir = "(synth, in memory)";
    files.name = f.synth_name;
    files.rank_paths.assign(f.synth->world(), "");
    files.comm_group_path = synth_groups->path();
    setup = runtime::PrepareRun(f.setup, std::move(files));
    if (setup.ok()) setup->files.comm_group_path = "(synth, in memory)";
  } else {
    setup = runtime::PrepareRun(f.setup);
  }
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
  SimulateInput input;
  std::optional<sim::RankFold> fold;
  uint64_t trace_bytes = 0;  // in-memory traces: shared memory, outside the process's RSS
  if (f.synth) {
    const synth::Job& job = *f.synth;
    input.open = [&job, &setup,
                  &trace_bytes](int r) -> Result<std::unique_ptr<workload::RankGraph>> {
      GENIE_ASSIGN_OR_RETURN(synth::MemoryTrace trace, synth::MemoryTrace::Rank(job, r));
      trace_bytes += trace.bytes();
      return workload::RankGraph::Open(trace.path(), r, setup->read);
    };
    if (f.symmetry != "off") {
      auto found = FoldFor(f, *setup, interest);
      if (found.ok()) {
        fold = *found;
        input.fold = &*fold;
        // Said whatever the log level: what was simulated is part of the result.
        std::cerr << "genie simulate: symmetry reduction: " << fold->Describe()
                  << "; every rank's figures are its representative's, exactly (--symmetry off "
                     "simulates every rank)\n";
      } else {
        std::cerr << "genie simulate: symmetry reduction off, every rank simulated: "
                  << found.status().message() << "\n";
      }
    }
    std::vector<int> ranks;
    for (int r = 0; r < setup->world_size(); ++r) {
      if (!fold || fold->IsRep(r)) ranks.push_back(r);
    }
    auto need = EstimateBytes(job, ranks);
    if (!need.ok()) {
      std::cerr << "genie simulate: " << need.status().message() << "\n";
      return 2;
    }
    const double have = AvailableBytes();
    spdlog::info("{} ranks simulated, about {:.0f} MiB of memory (the machine has {:.0f} MiB "
                 "available)",
                 ranks.size(), *need / (1 << 20), have / (1 << 20));
    if (have > 0 && *need > have) {
      std::cerr << "genie simulate: simulating " << ranks.size() << " ranks of " << f.synth_name
                << " needs about " << static_cast<int64_t>(*need / (1 << 20))
                << " MiB, more than the " << static_cast<int64_t>(have / (1 << 20))
                << " MiB this machine has available; use fewer ranks or micro-batches, or a "
                   "network on which the replicas fold (docs/simulation.md, \"At cluster "
                   "scale\")\n";
      return 2;
    }
  }
  // With a fold, outputs hold the representatives' ops (the ranks of interest, when given, are
  // representatives) and every rank's summary.
  std::vector<int> ops_of = interest;  // whose ops the outputs keep (empty: every rank's)
  if (fold) {
    if (ops_of.empty()) {
      for (int r = 0; r < setup->world_size(); ++r) {
        if (fold->IsRep(r)) ops_of.push_back(r);
      }
    }
    run_info["symmetry_reduction"] = {{"representatives", fold->representatives()},
                                      {"copies", fold->copies()},
                                      {"folded", fold->Describe()}};
    if (!f.output.empty() || !f.trace_out.empty()) run_info["ranks_of_interest"] = ops_of;
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
  if (!ops_of.empty()) (*recorder)->KeepOpsOf(ops_of);
  const auto wall_start = std::chrono::steady_clock::now();
  auto last_progress = wall_start;
  if (f.progress) {
    input.progress = [&](TimeNs now, uint64_t events) {
      const auto t = std::chrono::steady_clock::now();
      if (t - last_progress < std::chrono::seconds(5)) return;
      last_progress = t;
      const double secs = std::chrono::duration<double>(t - wall_start).count();
      std::cerr << fmt::format("genie simulate: {:.3f} ms simulated, {} events, {:.2f} M events/s\n",
                               static_cast<double>(now) / 1e6, events, events / secs / 1e6);
    };
  }
  auto stats = Simulate(*setup, *setup->network, *model, recorder->get(),
                        SimulatedIterations(f.iterations, f.warmup), nullptr, &input);
  if (fold && stats.ok()) {
    for (const record::RankSummary& summary : stats->ranks) {
      if (!fold->IsRep(summary.rank)) (*recorder)->OnRankDone(summary);
    }
  }
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
  if (f.synth) {
    spdlog::info("in-memory traces: {:.1f} MiB (held outside the process's resident set)",
                 static_cast<double>(trace_bytes) / (1 << 20));
  }
  spdlog::info("simulated {} messages ({} bytes) in {} events, {} ns of simulated time{}",
               stats->messages, stats->bytes, stats->events, stats->end_ns,
               fold ? " (the representatives')" : "");
  if (stats->memory_waited > 0 && setup->exec.memory.has_value()) {
    spdlog::info("remote memory: {} accesses waited in {}'s queues, {} ns in all",
                 stats->memory_waited, config::MemoryTypeName(setup->exec.memory->type),
                 stats->memory_wait_ns);
  }
  return write_outputs();
}

}  // namespace genie::driver
