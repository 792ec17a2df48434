#include "genie/driver/jobs_prediction.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "genie/driver/connection_spines.h"
#include "genie/driver/neighbour_overlap.h"
#include "genie/driver/run.h"
#include "genie/env/env.h"
#include "genie/record/run_folder.h"
#include "genie/report/statistics.h"
#include "genie/testbed/calibration.h"
#include "genie/testbed/control.h"

namespace genie::driver {

Result<config::NetworkConfig> JobsHostsNetwork(const JobsSpec& spec,
                                               const std::string& network_path) {
  if (!network_path.empty()) return config::LoadNetworkConfig(network_path);
  if (spec.testbed.empty()) {
    return Status::InvalidArgument(
        spec.path + ": names no testbed: pass --network hosts.yml (one NPU per host), or give "
                    "the file a testbed: key");
  }
  std::string note;
  GENIE_ASSIGN_OR_RETURN(std::string yml, testbed::TestbedNetworkYml(spec.testbed, 1, -1, &note));
  return config::ParseNetworkConfig(yml, "testbed " + spec.testbed + ", " + note);
}

Status PlaceOnHosts(const config::NetworkConfig& hosts, JobsSpec* spec) {
  const int n = hosts.total_npus();
  std::vector<std::string> names;
  int nics = 1;
  if (!spec->testbed.empty()) {
    auto layout = testbed::Load(spec->testbed);
    if (layout.ok()) {
      for (const auto& h : layout->hosts) names.push_back(h.name);
      if (!layout->hosts.empty()) nics = static_cast<int>(layout->hosts[0].nics.size());
      if (static_cast<int>(names.size()) != n) {
        return Status::InvalidArgument(fmt::format(
            "{}: testbed {} has {} hosts but the network {} has {} NPUs; give a network with "
            "one NPU per host",
            spec->path, spec->testbed, names.size(), hosts.path, n));
      }
    }
  }
  if (names.empty()) {
    for (int h = 0; h < n; ++h) names.push_back("h" + std::to_string(h));
  }
  return PlaceJobs(names, nics, spec);
}

namespace {

// A run: job's flags as genie run would take them (the keys jobs_spec.cc maps to them).
runtime::SetupFlags FlagsOf(const JobSpec& job) {
  runtime::SetupFlags f;
  auto get = [&job](const char* key) {
    auto it = job.options.find(key);
    return it == job.options.end() ? std::string() : it->second;
  };
  f.workload = job.workload;
  f.system_path = get("system");
  f.memory_path = get("memory");
  f.comm_group = get("comm_group");
  if (!get("ctrl_deps").empty()) f.ctrl_deps = get("ctrl_deps");
  f.default_comm_size = get("default_comm_size");
  f.topology = get("topology");
  if (!get("channels").empty()) f.channels = std::atoi(get("channels").c_str());
  f.slice = get("slice");
  if (!get("goodput").empty()) f.goodput = std::atof(get("goodput").c_str());
  if (!get("message_overhead").empty()) {
    f.message_overhead_ns = std::atof(get("message_overhead").c_str());
  }
  f.faults = get("faults");
  return f;
}

}  // namespace

Result<JobsModel> ModelJobs(const JobsSpec& spec, const std::string& own_name,
                            const runtime::RunSetup* own, const IterationPolicy* own_iterations) {
  JobsModel m;
  for (const JobSpec& job : spec.jobs) {
    SimJob s;
    s.name = job.name;
    s.start_ns = job.start_ns;
    s.rank_host = job.rank_host;
    if (job.type == JobType::kTraffic) {
      const TrafficSpec& t = job.traffic;
      const int parallel = std::max(1, t.parallel);
      for (const auto& [from, to] : t.pairs) {
        for (int c = 0; c < parallel; ++c) {
          TrafficFlow f;
          f.src_host = from;
          f.dst_host = to;
          f.bytes_per_ns = static_cast<double>(t.rate_bps) / 8e9 / parallel;
          f.bytes = t.bytes == 0 ? 0 : std::max<Bytes>(1, t.bytes / parallel);
          f.duration_ns = t.duration_ns;
          f.on_ns = t.on_ns;
          f.off_ns = t.off_ns;
          s.traffic.push_back(f);
        }
      }
      s.rank_host.clear();
      m.jobs.push_back(std::move(s));
      continue;
    }
    if (job.name == own_name && own != nullptr) {
      s.setup = own;
      if (own_iterations != nullptr) s.iterations = *own_iterations;
    } else if (job.subcommand == "run" && !job.workload.empty()) {
      auto setup = runtime::PrepareRun(FlagsOf(job));
      if (!setup.ok()) return setup.status().WithContext(spec.path + ": job '" + job.name + "'");
      // genie run issues every comm stream's collectives as their dependencies allow (run.cc),
      // not one stream at a time as ASTRA-sim's default does: a neighbour simulated the latter
      // way sends less at once (gpt_dp2_tp2_pp2: 4.6 s a step against 3.1 s), so it would be
      // predicted to cost its neighbours less than it does.
      setup->exec.comm_streams = runtime::ExecutorConfig::CommStreams::kConcurrent;
      m.setups.push_back(std::make_unique<runtime::RunSetup>(std::move(*setup)));
      s.setup = m.setups.back().get();
      auto it = job.options.find("warmup");
      s.iterations.warmup = it == job.options.end() ? 0 : std::atoi(it->second.c_str());
      s.iterations.iterations = std::max(1, job.iterations);
    } else {
      m.skipped.push_back(fmt::format(
          "job '{}' (genie {}) is not modelled: only run: jobs' workloads are simulated",
          job.name, job.subcommand));
      continue;
    }
    s.iterations.barrier_first = s.iterations.barrier_last = false;
    m.jobs.push_back(std::move(s));
  }
  return m;
}

Result<std::vector<JobPrediction>> PredictJobs(const JobsModel& model,
                                               const config::NetworkConfig& hosts,
                                               sim::NetworkModelKind kind,
                                               const std::string& only) {
  GENIE_ASSIGN_OR_RETURN(JobsSimulation together, SimulateJobs(model.jobs, hosts, kind));
  std::vector<JobPrediction> out;
  for (size_t j = 0; j < model.jobs.size(); ++j) {
    const SimJob& job = model.jobs[j];
    if (job.setup == nullptr || (!only.empty() && job.name != only)) continue;
    GENIE_ASSIGN_OR_RETURN(JobsSimulation alone, SimulateJobs({job}, hosts, kind));
    JobPrediction p;
    p.name = job.name;
    p.together_ns = together.jobs[j].step_ns;
    p.alone_ns = alone.jobs[0].step_ns;
    std::vector<Interval> busy;
    for (size_t k = 0; k < model.jobs.size(); ++k) {
      if (k == j || model.jobs[k].setup == nullptr) continue;
      const std::vector<Interval> steps = IterationIntervals(together.jobs[k].ranks);
      busy.insert(busy.end(), steps.begin(), steps.end());
    }
    for (const auto& [iteration, share] :
         IterationOverlaps(together.jobs[j].ranks, MergeIntervals(std::move(busy)))) {
      p.overlap.push_back(share);
    }
    p.together_median = report::SpreadOf(p.together_ns).median;
    p.alone_median = report::SpreadOf(p.alone_ns).median;
    out.push_back(std::move(p));
  }
  return out;
}

std::optional<TimeNs> RecordedJobStart(const std::string& folder) {
  std::optional<TimeNs> first;
  // A rank's records come in its iterations' order: its first rank record is its earliest.
  for (const std::string& line : record::FirstRecordLines(folder, "rank")) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("start") || !j["start"].is_number_integer()) continue;
    const auto start = j["start"].get<TimeNs>();
    if (!first || start < *first) first = start;
  }
  return first;
}

std::optional<TimeNs> RecordedTrafficStart(const std::string& folder) {
  std::optional<TimeNs> first;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.rfind("traffic-rank-", 0) != 0 || entry.path().extension() != ".jsonl") continue;
    std::ifstream in(entry.path());
    // Its header, then `on_ns` as its sender starts (driver/traffic.cc); a receiver has none.
    std::string line;
    for (int n = 0; n < 4 && std::getline(in, line); ++n) {
      const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || !j.contains("on_ns") || !j["on_ns"].is_number_integer()) continue;
      const auto on = j["on_ns"].get<TimeNs>();
      if (!first || on < *first) first = on;
      break;
    }
  }
  if (!first) return std::nullopt;
  const env::Env* env = env::Env::Default();
  return *first + (env->Now() - env->NowWall());
}

int StartAsMeasured(const JobsSpec& spec, const std::string& own, JobsModel* model) {
  const JobSpec* own_spec = spec.Find(own);
  if (own_spec == nullptr) return 0;
  const std::optional<TimeNs> own_start = RecordedJobStart(own_spec->output);
  if (!own_start) return 0;
  int measured = 0;
  for (SimJob& j : model->jobs) {
    const JobSpec* js = spec.Find(j.name);
    if (js == nullptr) continue;
    std::optional<TimeNs> start;
    if (j.setup != nullptr) {
      start = j.name == own ? own_start : RecordedJobStart(js->output);
    } else if (js->type == JobType::kTraffic) {
      start = RecordedTrafficStart(js->output);
    }
    if (start) {
      j.start_ns = own_spec->start_ns + (*start - *own_start);
      ++measured;
    }
  }
  TimeNs earliest = 0;
  for (const SimJob& j : model->jobs) earliest = std::min(earliest, j.start_ns);
  for (SimJob& j : model->jobs) j.start_ns -= earliest;
  return measured;
}

namespace {

// The jobs file of this run (GENIE_JOBS), placed on the hosts' network; nullopt without it.
struct ThisJob {
  std::string file, name;
  JobsSpec spec;
  config::NetworkConfig hosts;
};
std::optional<Result<ThisJob>> LoadThisJob(const RunOptions& o, const runtime::RunSetup& setup) {
  const char* file = std::getenv(kJobsFileEnv);
  const char* name = std::getenv(kJobNameEnv);
  if (file == nullptr || name == nullptr || *file == '\0' || *name == '\0') return std::nullopt;
  auto load = [&]() -> Result<ThisJob> {
    ThisJob t;
    t.file = file;
    t.name = name;
    GENIE_ASSIGN_OR_RETURN(t.spec, LoadJobsSpec(file));
    // The launcher's --output moves every job's folder: its neighbours' are found there.
    if (const char* base = std::getenv(kJobsOutputEnv); base != nullptr && *base != '\0') {
      GENIE_RETURN_IF_ERROR(SetJobsOutput(base, &t.spec));
    }
    if (t.spec.testbed.empty()) t.spec.testbed = o.testbed;
    // The job's own --network describes its ranks, not the hosts: the testbed's is the hosts'.
    const std::string network_path =
        t.spec.testbed.empty() && setup.network ? setup.network->path : std::string();
    GENIE_ASSIGN_OR_RETURN(t.hosts, JobsHostsNetwork(t.spec, network_path));
    GENIE_RETURN_IF_ERROR(PlaceOnHosts(t.hosts, &t.spec));
    const JobSpec* own = t.spec.Find(name);
    if (own == nullptr || own->type != JobType::kWorkload) {
      return Status::NotFound(t.file + " has no workload job named '" + t.name + "'");
    }
    if (static_cast<int>(own->rank_host.size()) != setup.world_size()) {
      return Status::InvalidArgument(fmt::format("job '{}' has {} ranks in {}, this run {}", t.name,
                                                 own->rank_host.size(), t.file,
                                                 setup.world_size()));
    }
    return t;
  };
  return load();
}

// Per measured iteration of job `own` (`ranks`), the share of it during which a neighbour's
// recorded steps ran. Empty when a neighbour of the model is a traffic job (its on/off
// periods, not its steps, say when it loads the links) or has recorded no steps.
std::map<int, double> MeasuredOverlap(const JobsSpec& spec, const JobsModel& model,
                                      const std::string& own,
                                      const std::vector<record::RankSummary>& ranks) {
  std::vector<Interval> busy;
  for (const SimJob& j : model.jobs) {
    if (j.name == own) continue;
    const JobSpec* js = spec.Find(j.name);
    if (j.setup == nullptr || js == nullptr) return {};
    std::optional<std::vector<Interval>> steps = RecordedActivity(js->output);
    if (!steps) return {};
    busy.insert(busy.end(), steps->begin(), steps->end());
  }
  if (busy.empty()) return {};
  return IterationOverlaps(ranks, MergeIntervals(std::move(busy)));
}

}  // namespace

std::optional<PlacedJob> PlaceThisJob(const RunOptions& o, const runtime::RunSetup& setup) {
  auto t = LoadThisJob(o, setup);
  if (!t) return std::nullopt;
  if (!t->ok()) {
    std::cerr << "genie run: --predict: " << t->status().message()
              << "; the prediction places the ranks as genie launch --testbed does\n";
    return std::nullopt;
  }
  return PlacedJob{(*t)->hosts, (*t)->spec.Find((*t)->name)->rank_host};
}

std::optional<NeighbourPrediction> AddNeighbours(const RunOptions& o,
                                                 const runtime::RunSetup& setup,
                                                 sim::NetworkModelKind kind,
                                                 const std::vector<record::RankSummary>& ranks,
                                                 report::Expectation* expected) {
  auto loaded = LoadThisJob(o, setup);
  if (!loaded) return std::nullopt;
  const std::string file = std::getenv(kJobsFileEnv), name = std::getenv(kJobNameEnv);
  auto fail = [&](const Status& st) -> std::optional<NeighbourPrediction> {
    std::cerr << "genie run: --predict: the neighbours of job '" << name << "' in " << file
              << " could not be predicted (" << st.message()
              << "); the prediction is the job alone\n";
    return std::nullopt;
  };
  if (!loaded->ok()) return fail(loaded->status());
  const JobsSpec* spec = &(*loaded)->spec;
  // bbr's probes are placed in the job's own per-iteration prediction, where the run had them
  // (run_results.cc); the neighbours' share, on the model's own timeline, leaves them out.
  config::NetworkConfig without_probes = (*loaded)->hosts;
  without_probes.probe_rtt = {};
  const config::NetworkConfig* hosts = &without_probes;
  const IterationPolicy own{o.warmup, o.iterations, false, false};
  auto model = ModelJobs(*spec, name, &setup, &own);
  if (!model.ok()) return fail(model.status());
  if (const char* started = std::getenv(kJobsStartedEnv)) {
    const std::string list = "," + std::string(started) + ",";
    std::erase_if(model->jobs, [&](const SimJob& j) {
      return j.name != name && list.find("," + j.name + ",") == std::string::npos;
    });
  }
  // The harness's time between iterations (this job's, measured), for every workload job.
  const std::vector<report::IterationStep> steps = report::StepTimes(ranks);
  std::vector<TimeNs> gaps;
  for (size_t i = 1; i < steps.size(); ++i) {
    gaps.push_back(std::max<TimeNs>(0, steps[i].start - steps[i - 1].finish));
  }
  const TimeNs gap = report::SpreadOf(gaps).median;
  for (SimJob& j : model->jobs) j.iterations.gap_ns = gap;
  const int measured_starts = StartAsMeasured(*spec, name, &*model);
  // On a leaf-spine hashing ports, each job's connections on their spines, as its ranks
  // recorded them in its folder (a neighbour still running has, once connected).
  for (SimJob& j : model->jobs) {
    const JobSpec* js = spec->Find(j.name);
    if (j.setup == nullptr || js == nullptr) continue;
    j.connection_spines = ConnectionSpines(spec->testbed, ConnectionRecordsIn(js->output), nullptr);
  }
  bool found = false;
  NeighbourPrediction n;
  n.jobs_file = file;
  n.job = name;
  n.skipped = model->skipped;
  n.network = hosts->path;
  n.gap_ns = gap;
  n.measured_starts = measured_starts;
  for (const SimJob& j : model->jobs) n.starts[j.name] = j.start_ns;
  for (const SimJob& j : model->jobs) {
    if (!j.connection_spines.empty()) n.known_spines[j.name] = j.connection_spines.size();
  }
  for (const SimJob& j : model->jobs) {
    if (j.name == name) {
      found = true;
    } else {
      n.neighbours.push_back(j.name);
    }
  }
  if (!found) return fail(Status::NotFound("the file has no run: job of that name"));
  auto figures = PredictJobs(*model, *hosts, kind, name);
  if (!figures.ok()) return fail(figures.status());
  if (figures->empty()) return fail(Status::NotFound("the job was not simulated"));
  n.figures = figures->front();
  const JobPrediction& f = n.figures;
  // Each iteration's own interference where the jobs simulation has that iteration, else the
  // medians'; scaled to how much of the measured iteration the neighbours' recorded steps
  // covered, where the simulation's covered enough of one to say what a full overlap costs.
  const TimeNs common = f.interference_ns();
  std::vector<TimeNs> simulated;
  for (size_t i = 0; i < f.together_ns.size() && i < f.alone_ns.size(); ++i) {
    simulated.push_back(f.together_ns[i] - f.alone_ns[i]);
  }
  n.overlap_simulated = f.overlap;
  n.overlap_measured = MeasuredOverlap(*spec, *model, name, ranks);
  const std::map<int, TimeNs> scaled =
      ScaledInterference(simulated, f.overlap, n.overlap_measured);
  auto interference = [&](int iteration) {
    if (auto it = scaled.find(iteration); it != scaled.end()) return it->second;
    const size_t i = static_cast<size_t>(iteration);
    if (iteration >= 0 && i < simulated.size()) return simulated[i];
    return common;
  };
  // The time the job's ranks idle alone beyond the simulation's, which the neighbours' steps
  // fill where they cover the iteration (FilledIdle).
  auto absorbed = [&](int iteration, TimeNs own_step, TimeNs added) -> TimeNs {
    const size_t i = static_cast<size_t>(iteration);
    if (iteration < 0 || i >= f.alone_ns.size()) return 0;
    const auto p = expected->probe_ns_of_iteration.find(iteration);
    const TimeNs probe = p != expected->probe_ns_of_iteration.end() ? p->second : 0;
    const auto m = n.overlap_measured.find(iteration);
    const double share = m != n.overlap_measured.end() ? m->second
                         : i < f.overlap.size()        ? f.overlap[i]
                                                       : 0.0;
    return FilledIdle(own_step, probe, f.alone_ns[i], share, added);
  };
  // An iteration's step expected alone, with its neighbours.
  auto with_neighbours = [&](int iteration, TimeNs own_step) {
    const TimeNs added = interference(iteration);
    const TimeNs filled = absorbed(iteration, own_step, added);
    if (filled > 0) n.filled_of_iteration[iteration] = filled;
    return own_step + added - filled;
  };
  n.alone_step_ns = expected->step_ns;
  n.alone_of_iteration = expected->step_ns_of_iteration;
  expected->step_ns += common;
  for (auto& [iteration, step] : expected->step_ns_of_iteration) {
    step = with_neighbours(iteration, step);
  }
  // Iterations without a prediction of their own expected the common step: now their own
  // interference on top of it.
  for (int i = 0; i < static_cast<int>(f.together_ns.size()); ++i) {
    if (!expected->step_ns_of_iteration.count(i)) {
      expected->step_ns_of_iteration[i] = with_neighbours(i, n.alone_step_ns);
      n.alone_of_iteration[i] = n.alone_step_ns;
    }
  }
  expected->source += fmt::format(", with {} neighbour job(s) of {}", n.neighbours.size(), file);
  return n;
}

namespace {
// Indexed by measured iteration (0, 1, ...): `by_iteration`'s values, `missing` where it has
// none.
template <typename T>
nlohmann::json IterationArray(const std::map<int, T>& by_iteration, const nlohmann::json& missing) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [iteration, value] : by_iteration) {
    if (iteration < 0) continue;
    while (static_cast<int>(out.size()) < iteration) out.push_back(missing);
    out.push_back(value);
  }
  return out;
}
}  // namespace

void NeighboursToJson(const NeighbourPrediction& n, nlohmann::json* prediction) {
  if (!prediction->is_object()) return;
  if (prediction->contains("iterations") && (*prediction)["iterations"].is_array()) {
    for (auto& row : (*prediction)["iterations"]) {
      const int i = row.value("iteration", -1);
      auto it = n.alone_of_iteration.find(i);
      row["expected_alone_step_ns"] = it != n.alone_of_iteration.end() ? it->second
                                                                       : n.alone_step_ns;
    }
  }
  (*prediction)["neighbours"] = {
      {"jobs_file", n.jobs_file},
      {"job", n.job},
      {"jobs", n.neighbours},
      {"not_modelled", n.skipped},
      {"network", n.network},
      {"expected_alone_step_ns", n.alone_step_ns},
      {"simulated_together_ns", n.figures.together_ns},
      {"simulated_alone_ns", n.figures.alone_ns},
      {"interference_ns", n.figures.interference_ns()},
      {"gap_between_iterations_ns", n.gap_ns},
      {"simulated_starts_ns", n.starts},
      {"measured_starts", n.measured_starts},
      {"overlap_simulated", n.overlap_simulated},
      {"overlap_measured", IterationArray(n.overlap_measured, nullptr)},
      {"filled_ns", IterationArray(n.filled_of_iteration, 0)},
  };
  if (!n.known_spines.empty()) (*prediction)["neighbours"]["ecmp_connections"] = n.known_spines;
}

void PrintNeighbours(std::ostream& out, const NeighbourPrediction& n) {
  std::string names;
  for (const auto& s : n.neighbours) names += (names.empty() ? "" : ", ") + s;
  const double alone = static_cast<double>(n.figures.alone_median);
  out << fmt::format(
      "neighbours of job {} ({}): {}; predicted step together {}, alone {}: they cost {} "
      "({:+.1f} %)\n",
      n.job, n.jobs_file, names.empty() ? "none modelled" : names,
      FormatDuration(n.figures.together_median), FormatDuration(n.figures.alone_median),
      FormatDuration(n.figures.interference_ns()),
      alone > 0 ? 100.0 * static_cast<double>(n.figures.interference_ns()) / alone : 0.0);
  for (const auto& s : n.skipped) out << "  " << s << "\n";
}

}  // namespace genie::driver
