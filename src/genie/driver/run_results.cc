#include "genie/driver/run_results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <vector>

#include "genie/common/usable_cores.h"
#include "genie/driver/attribution_inputs.h"
#include "genie/driver/connection_spines.h"
#include "genie/driver/jobs_prediction.h"
#include "genie/driver/probe_placement.h"
#include "genie/driver/run.h"
#include "genie/driver/simulation.h"
#include "genie/driver/testbed_calibrate.h"
#include "genie/record/run_folder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/doctor_findings.h"
#include "genie/report/html/html_page.h"
#include "genie/report/html/page_model.h"
#include "genie/report/localization.h"
#include "genie/report/network_settings.h"
#include "genie/report/prediction.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/run_streams.h"
#include "genie/report/statistics.h"
#include "genie/report/summary.h"
#include "genie/testbed/calibration.h"
#include "genie/testbed/control.h"
#include "genie/testbed/layout.h"

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
      "\nstep time per iteration  measured median %s%s   predicted (%s, %s model) %s   "
      "measured/predicted %.2f\n",
      FormatDuration(spread.median).c_str(), which.c_str(), setup.network->path.c_str(),
      sim::NetworkModelName(kind), FormatDuration(predicted->end_ns).c_str(),
      pred > 0 ? static_cast<double>(spread.median) / pred : 0.0);
}

namespace {

Result<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot open; pass an earlier run's results.json");
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return Status::InvalidArgument(path + ": not JSON; pass an earlier run's results.json");
  }
  return j;
}

// The network to predict on: --network's, else the testbed's description of its hosts,
// calibrated with the calibration measured under the run's network settings when there is one
// (`notes`, `calibration_settings`: what to say about the one used). With more ranks than hosts,
// `rank_host` places rank i on host i mod H, as genie launch --testbed does, and the ranks of a
// host share its links as they use them (host slots, sim/host_slots.h): a static share of the
// link per rank, which the ASTRA-sim export writes, would halve a rank's rate while its
// host-mate is idle.
Result<config::NetworkConfig> PredictionNetwork(const RunOptions& o, const runtime::RunSetup& setup,
                                                int world_size,
                                                const report::SettingsSummary& run_settings,
                                                std::vector<std::string>* notes,
                                                report::SettingsSummary* calibration_settings,
                                                std::vector<int>* rank_host) {
  if (setup.network) return *setup.network;
  if (o.testbed.empty()) {
    return Status::InvalidArgument(
        "--predict needs a network: pass --network network.yml, or run on a testbed (genie "
        "launch --testbed NAME, or --testbed NAME)");
  }
  GENIE_ASSIGN_OR_RETURN(testbed::Layout layout, testbed::Load(o.testbed));
  const int hosts = static_cast<int>(layout.hosts.size());
  const int per_host = hosts > 0 ? (world_size + hosts - 1) / hosts : 1;
  // As `genie testbed network-yml` writes it: calibrated when `genie testbed calibrate` ran.
  std::string note;
  std::optional<testbed::ChosenCalibration> chosen;
  // Ranks on a host's several NICs use one rail each (rank i on NIC (i / H) mod NICs): those
  // keep the static share, each rank's rail. So does the congestion-unaware model, in which no
  // message delays another: a shared link would give each rank all of it.
  const bool slots = per_host > 1 && layout.spec.nics == 1 &&
                     sim::ParseNetworkModelKind(o.network_model) !=
                         sim::NetworkModelKind::kCongestionUnaware;
  GENIE_ASSIGN_OR_RETURN(std::string yml,
                         testbed::TestbedNetworkYml(o.testbed, slots ? 1 : per_host, -1, &note,
                                                    &run_settings, &chosen));
  if (slots) {
    std::vector<int> nic;
    PlaceSingleJob(world_size, hosts, 1, rank_host, &nic);
  }
  if (chosen) {
    const std::string note_text =
        report::CalibrationNote(o.testbed, chosen->calibration.settings, run_settings,
                                chosen->calibration.measured, chosen->matched, chosen->kept);
    if (!note_text.empty()) notes->push_back(note_text);
    *calibration_settings = chosen->calibration.settings;
    for (std::string& n :
         testbed::RunNotes(chosen->calibration, o.testbed, std::min(hosts, world_size),
                           report::kIncastSendShare)) {
      notes->push_back(std::move(n));
    }
  }
  const std::string machine = MachineNote(layout, std::min(hosts, world_size),
                                          std::min(per_host, layout.spec.nics), UsableCores());
  if (!machine.empty()) notes->push_back("testbed " + o.testbed + ": " + machine);
  return config::ParseNetworkConfig(yml, "testbed " + o.testbed + ", " + note);
}

// The measured iterations given to the model (MeasuredIteration): each iteration predicted
// again with every rank starting when its measured one did (its start minus the iteration's
// first). A measured step runs from the first rank's start, and ranks leave the iteration
// barrier one wake-up after another (0.3-1 ms on 8 ranks of 2 busy cores), which a collective
// cannot hide: without it the model, whose ranks all start at 0, reads the harness's skew as
// network time. With it goes each rank's idle time before the iteration (since it finished the
// one before, warm-up included): on shaped links it sets how much burst their buckets hold,
// which the iteration barrier's few hundred µs only partly refill; and the order each rank
// issued each group's collectives in (Executor::SetIssueOrder). The first kEachIterationMax
// iterations are simulated one by one; the rest with each rank's median offset and idle time,
// in one simulation.
constexpr size_t kEachIterationMax = 64;

std::map<int, MeasuredIteration> MeasuredIterations(int n,
                                                    const std::vector<record::RankSummary>& ranks,
                                                    const std::vector<record::OpEvent>& ops,
                                                    const std::vector<TimeNs>& connected) {
  std::map<int, std::vector<TimeNs>> start, finish;  // iteration -> per rank (-1: none)
  std::map<int, std::vector<TimeNs>> probe_at;        // iteration -> per rank, its own start on
  std::vector<TimeNs> opened(n, -1);  // per rank: its first iteration's start (warm-up included)
  for (const auto& s : ranks) {
    if (s.rank < 0 || s.rank >= n) continue;
    if (opened[s.rank] < 0 || s.start < opened[s.rank]) opened[s.rank] = s.start;
    start.try_emplace(s.iteration, std::vector<TimeNs>(n, -1)).first->second[s.rank] = s.start;
    finish.try_emplace(s.iteration, std::vector<TimeNs>(n, -1)).first->second[s.rank] = s.finish;
    probe_at.try_emplace(s.iteration, std::vector<TimeNs>(n, -1)).first->second[s.rank] =
        s.probe_rtt_episodes > 0 ? s.probe_rtt_at_ns : -1;
  }
  std::map<int, MeasuredIteration> out;
  for (const auto& [iteration, st] : start) {
    if (iteration < 0) continue;
    MeasuredIteration& it = out[iteration];
    // it.iteration stays 0: the healthy expectation, without the --faults compute faults, so
    // that a straggler is flagged and attributed; the what-if with them is predicted beside it
    // (driver/attribution_inputs.h).
    TimeNs first = -1;
    for (TimeNs t : st) {
      if (t >= 0 && (first < 0 || t < first)) first = t;
    }
    it.start_ns.assign(n, 0);
    for (int r = 0; r < n; ++r) it.start_ns[r] = st[r] >= 0 ? st[r] - first : 0;
    it.probe_at_ns.assign(n, -1);
    for (int r = 0; r < n; ++r) {
      const TimeNs at = probe_at[iteration][r];
      if (at >= 0 && st[r] >= 0) it.probe_at_ns[r] = st[r] - first + at;
    }
    // How long the connections had been open: since the rank's first op, and up before it.
    it.since_open_ns.assign(n, 0);
    for (int r = 0; r < n; ++r) {
      const TimeNs up = r < static_cast<int>(connected.size()) ? connected[r] : 0;
      it.since_open_ns[r] = st[r] >= 0 ? st[r] - opened[r] + up : 0;
    }
    auto before = finish.find(iteration - 1);
    if (before == finish.end()) continue;
    it.idle_ns.assign(n, 0);
    for (int r = 0; r < n; ++r) {
      if (st[r] < 0 || before->second[r] < 0) {
        it.idle_ns.clear();
        break;
      }
      it.idle_ns[r] = std::max<TimeNs>(0, st[r] - before->second[r]);
    }
  }
  // Issue orders: each rank's collectives of an iteration by start (ties: node id, the order
  // the executor considers ready nodes in).
  std::vector<const record::OpEvent*> colls;
  for (const auto& e : ops) {
    if (e.kind == OpKind::kCollective && e.rank >= 0 && e.rank < n && out.count(e.iteration)) {
      colls.push_back(&e);
    }
  }
  std::sort(colls.begin(), colls.end(), [](const auto* a, const auto* b) {
    return std::tie(a->iteration, a->rank, a->start, a->node) <
           std::tie(b->iteration, b->rank, b->start, b->node);
  });
  for (const auto* e : colls) {
    MeasuredIteration& it = out[e->iteration];
    if (it.issue_order.empty()) it.issue_order.resize(n);
    it.issue_order[e->rank][e->group].push_back(e->node);
  }
  return out;
}

// Per rank, the median over `rows` (each one value per rank).
std::vector<TimeNs> MedianPerRank(int n, const std::vector<std::vector<TimeNs>>& rows) {
  std::vector<TimeNs> median(n, 0);
  for (int r = 0; r < n; ++r) {
    std::vector<TimeNs> of_rank;
    for (const auto& row : rows) of_rank.push_back(row[r]);
    median[r] = report::SpreadOf(std::move(of_rank)).median;
  }
  return median;
}

// Each rank's median idle time before its iterations (empty: none known).
std::vector<TimeNs> MedianIdle(int n, const std::map<int, MeasuredIteration>& measured) {
  std::vector<std::vector<TimeNs>> rows;
  for (const auto& [iteration, it] : measured) {
    if (!it.idle_ns.empty()) rows.push_back(it.idle_ns);
  }
  if (rows.empty()) return {};
  return MedianPerRank(n, rows);
}

// Each measured iteration's own prediction (its step into `expected`) and, for those predicted
// one by one, the ops furthest behind it (into `behind`); their conditions become those the
// prediction ran under (bbr's probes placed, an issue order it stalled on dropped), which the
// attribution simulates again.
void PredictEachIteration(
    const runtime::RunSetup& setup, const config::NetworkConfig& net, sim::NetworkModelKind kind,
    std::map<int, MeasuredIteration>* measured, const std::vector<TimeNs>& common_idle,
    const std::vector<record::OpEvent>& ops, const std::vector<record::RankSummary>& ranks,
    report::Expectation* expected, std::map<int, std::vector<report::OpBehind>>* behind,
    const SimulateInput* placed) {
  const int n = setup.world_size();
  std::map<int, std::vector<const record::OpEvent*>> comm_of;  // the run's, per iteration
  for (const auto& e : ops) {
    if (e.iteration >= 0 && e.is_comm()) comm_of[e.iteration].push_back(&e);
  }
  // Whether the run recorded its connections' bbr PROBE_RTT (net/tcp/probe_rtt_watch.h).
  const bool recorded_probes = std::any_of(ranks.begin(), ranks.end(), [](const auto& s) {
    return s.probe_rtt_episodes > 0;
  });
  std::map<int, TimeNs> first_start, measured_step;  // per iteration, on the run's clock
  for (const report::IterationStep& s : report::StepTimes(ranks)) {
    first_start[s.iteration] = s.start;
    measured_step[s.iteration] = s.step_ns();
  }
  // `iteration` < 0: a median of several, whose ops are nobody's (nothing recorded).
  // `conditions`: `m` as predicted, probes placed (what the attribution simulates again).
  auto predict = [&](const MeasuredIteration& m, int iteration, MeasuredIteration* conditions,
                     TimeNs* probe_ns) -> std::optional<TimeNs> {
    *conditions = m;
    std::unique_ptr<record::Recorder> rec;
    auto simulate = [&](const MeasuredIteration& under) {
      rec.reset();  // a failed simulation's ops are not the prediction's
      if (iteration >= 0) {
        auto made = record::Recorder::Create("", nlohmann::json::object());
        if (made.ok()) rec = std::move(*made);
      }
      return Simulate(setup, net, kind, rec.get(), SimulatedIterations(1), &under, placed);
    };
    // bbr's probes where the run had them, at the same share of the predicted iteration and
    // lasting the same share of it (a step predicted faster than it ran, as alone beside a
    // neighbour, would else end before them, and pay for a probe of twice its share): first
    // without any, then with them where they fall (driver/probe_placement.h).
    const bool probes = iteration >= 0 && net.probe_rtt.interval_ns > 0;
    if (probes) *conditions = WithoutProbes(net, m);
    auto sim = simulate(*conditions);
    if (sim.ok() && probes) {
      if (auto with = WithProbesPlaced(net, m, measured_step[iteration], sim->end_ns,
                                       recorded_probes)) {
        auto again = simulate(*with);
        if (again.ok()) {
          *probe_ns = again->end_ns - sim->end_ns;
          sim = std::move(again);
          *conditions = std::move(*with);
        }
      }
    }
    if (!sim.ok() && !conditions->issue_order.empty()) {
      // The order a run had always admits a schedule, but a model is not a run: should the
      // simulation stall on it, the issue rules alone decide.
      conditions->issue_order.clear();
      sim = simulate(*conditions);
    }
    if (!sim.ok()) {
      std::cerr << "genie run: --predict: the iterations' start skew could not be simulated ("
                << sim.status().message() << "); every iteration expects the common step\n";
      return std::nullopt;
    }
    if (rec != nullptr && first_start.count(iteration)) {
      (*behind)[iteration] = report::OpsBehind(comm_of[iteration], first_start[iteration],
                                               rec->ops(), report::kOpsBehindKept);
    }
    return sim->end_ns;
  };
  std::vector<std::vector<TimeNs>> rest, rest_idle;  // the iterations past the cap
  std::vector<int> rest_iterations;
  for (auto& [iteration, it] : *measured) {
    if (expected->step_ns_of_iteration.size() >= kEachIterationMax) {
      rest.push_back(it.start_ns);
      if (!it.idle_ns.empty()) rest_idle.push_back(it.idle_ns);
      rest_iterations.push_back(iteration);
      continue;
    }
    MeasuredIteration as_predicted;
    TimeNs probe_ns = 0;
    const std::optional<TimeNs> step = predict(it, iteration, &as_predicted, &probe_ns);
    if (!step) return;
    expected->step_ns_of_iteration[iteration] = *step;
    if (probe_ns != 0) expected->probe_ns_of_iteration[iteration] = probe_ns;
    it = std::move(as_predicted);
  }
  if (rest.empty()) return;
  MeasuredIteration median;
  median.start_ns = MedianPerRank(n, rest);
  if (!rest_idle.empty()) median.idle_ns = MedianPerRank(n, rest_idle);
  const bool common = std::all_of(median.start_ns.begin(), median.start_ns.end(),
                                  [](TimeNs t) { return t == 0; }) &&
                      median.idle_ns == common_idle;
  MeasuredIteration as_predicted;
  TimeNs probe_ns = 0;  // none placed in a median iteration
  const std::optional<TimeNs> step =
      common ? expected->step_ns : predict(median, -1, &as_predicted, &probe_ns);
  if (!step) return;
  for (int iteration : rest_iterations) expected->step_ns_of_iteration[iteration] = *step;
}

// Measured beside the model (--predict) and/or the baseline; an expectation that cannot be had
// is skipped after saying why (the run itself succeeded).
// With --predict, the iterations flagged slow are attributed into `attributed`.
std::vector<report::Comparison> Compare(const RunOptions& o, const runtime::RunSetup& setup,
                                        int world_size, const std::vector<record::OpEvent>& ops,
                                        const std::vector<record::RankSummary>& ranks,
                                        const std::optional<report::Localization>& localized,
                                        const nlohmann::json& run_info,
                                        std::optional<NeighbourPrediction>* neighbours,
                                        std::vector<report::IterationAttribution>* attributed) {
  std::vector<report::Comparison> out;
  if (o.predict) {
    std::vector<std::string> notes;
    report::SettingsSummary calibration_settings;
    SimulateInput placed_input;
    const SimulateInput* placed = nullptr;
    auto net = PredictionNetwork(o, setup, world_size,
                                 report::SummaryOf(report::NetworkSettingsFromProvenance(run_info)),
                                 &notes, &calibration_settings, &placed_input.rank_host);
    if (!placed_input.rank_host.empty()) placed = &placed_input;
    // Launched by genie launch --jobs: its ranks where the launcher placed them.
    if (auto p = PlaceThisJob(o, setup)) {
      // bbr's probes as the run's own settings say (the jobs file's network takes the
      // calibration's).
      const auto probe_rtt = net.ok() ? net->probe_rtt : config::NetworkConfig::ProbeRtt{};
      net = std::move(p->hosts);
      if (net.ok()) net->probe_rtt = probe_rtt;
      placed_input.rank_host = std::move(p->rank_host);
      placed = &placed_input;
    }
    // A leaf-spine testbed hashing ports: each connection on the spine its leaf names for it.
    if (net.ok() && run_info.is_object() && run_info.contains("connections")) {
      std::string note;
      placed_input.connection_spines = ConnectionSpines(o.testbed, run_info["connections"], &note);
      if (!note.empty()) notes.push_back(note);
      if (!placed_input.connection_spines.empty()) placed = &placed_input;
    }
    if (!net.ok()) {
      std::cerr << "genie run: --predict: " << net.status().message() << "\n";
    } else {
      const sim::NetworkModelKind kind =
          sim::ParseNetworkModelKind(o.network_model).value_or(sim::NetworkModelKind::kFlow);
      // The common expectation (per op, and every iteration's without a measured start) with
      // each rank's median idle time before an iteration.
      auto measured = MeasuredIterations(setup.world_size(), ranks, ops,
                                         ConnectedBeforeFirstOp(setup.world_size(), run_info));
      MeasuredIteration common;
      common.idle_ns = MedianIdle(setup.world_size(), measured);
      auto rec = record::Recorder::Create("", nlohmann::json::object());
      auto sim = rec.ok() ? Simulate(setup, *net, kind, rec->get(), SimulatedIterations(1), &common,
                                     placed)
                          : Result<SimulationStats>(rec.status());
      if (!sim.ok()) {
        std::cerr << "genie run: --predict: the simulation failed: " << sim.status().message()
                  << "\n";
      } else {
        const std::string source =
            std::string(sim::NetworkModelName(kind)) + " model on " +
            net->path;  // the --network file, or "testbed T, (un)calibrated ..."
        report::Expectation expected =
            report::ExpectationFromSimulation(source, sim->end_ns, (*rec)->ops());
        for (int straggled :
             StraggledIterations(setup.world_size(), ops, ranks, **rec, sim->end_ns)) {
          auto it = measured.find(straggled);
          if (it != measured.end()) it->second.issue_order.clear();
        }
        std::map<int, std::vector<report::OpBehind>> behind;
        PredictEachIteration(setup, *net, kind, &measured, common.idle_ns, ops, ranks, &expected,
                             &behind, placed);
        // Launched by genie launch --jobs: the other jobs' traffic on top (jobs_prediction.h).
        *neighbours = AddNeighbours(o, setup, kind, ranks, &expected);
        report::Comparison c = report::Compare(ops, ranks, expected, o.flag_threshold);
        c.notes = std::move(notes);
        c.calibration_settings = std::move(calibration_settings);
        for (auto& it : c.iterations) {
          auto b = behind.find(it.iteration);
          if (b != behind.end()) it.behind = std::move(b->second);
        }
        const AttributionRun run{setup, *net, kind, measured, ops, ranks, placed};
        const std::map<int, TimeNs> what_if = WhatIfSteps(run);
        for (auto& it : c.iterations) {
          auto w = what_if.find(it.iteration);
          if (w != what_if.end()) it.what_if_ns = w->second;
        }
        // One job of several: contention from the neighbours' keys results.json gets.
        nlohmann::json with_neighbours = report::ToJson(c);
        if (*neighbours) NeighboursToJson(**neighbours, &with_neighbours);
        *attributed = AttributeSlowIterations(run, c, localized, run_info,
                                              ContentionFromPrediction(with_neighbours));
        out.push_back(std::move(c));
      }
    }
  }
  if (!o.baseline.empty()) {
    auto old = ReadJson(o.baseline);
    auto e = old.ok() ? report::ExpectationFromResults("baseline " + o.baseline, *old)
                      : Result<report::Expectation>(old.status());
    if (!e.ok()) {
      std::cerr << "genie run: --baseline: " << e.status().message() << "\n";
    } else {
      out.push_back(report::Compare(ops, ranks, *e, o.flag_threshold));
    }
  }
  return out;
}

// The ranks' probes of the links the run used, judged; on a testbed against its host links'
// rate. Nullopt (and a warning) when the records do not add up.
std::optional<report::Localization> Localization(const RunOptions& o, const nlohmann::json& records,
                                                 int world_size) {
  double expected = 0;
  std::string source;
  if (!o.testbed.empty()) {
    auto layout = testbed::Load(o.testbed);
    if (layout.ok() && layout->HostLinkRate() > 0) {
      expected = static_cast<double>(layout->HostLinkRate()) * report::kTcpGoodput / 8e9;
      source = fmt::format("testbed {}: host links at {} x goodput {}", o.testbed,
                           FormatBitRate(layout->HostLinkRate()), report::kTcpGoodput);
    }
  }
  auto l = report::Localize(records, world_size, expected, source);
  if (!l.ok()) {
    std::cerr << "genie run: --localize: " << l.status().message() << "\n";
    return std::nullopt;
  }
  return std::move(*l);
}

}  // namespace

void PrintRunResults(std::ostream& out, const report::RunRecords& records,
                     const std::vector<report::Comparison>& compared,
                     const std::optional<report::Localization>& localized,
                     const std::function<void()>& before_comparisons,
                     const std::vector<report::IterationAttribution>& attributed) {
  report::PrintSummary(out, records.ops, records.ranks);
  const nlohmann::json& info = records.run_info;
  report::PrintTraffic(
      out, info.is_object() && info.contains("traffic") ? info["traffic"] : nlohmann::json());
  if (info.is_object() && info.contains("testbed")) {
    report::PrintTestbed(out, info["testbed"], report::FirstStart(records.ops));
  }
  out << report::FormatNetworkSettings(report::NetworkSettingsFromProvenance(info));
  if (info.is_object() && info.contains("compute_faults")) {
    // From the first iteration's start (results.json keeps only communication ops).
    TimeNs origin = report::FirstStart(records.ops);
    for (const auto& r : records.ranks) origin = std::min(origin, r.start);
    report::PrintComputeFaults(out, info["compute_faults"], records.ranks, origin);
  }
  if (before_comparisons) before_comparisons();
  for (const auto& c : compared) report::PrintComparison(out, c);
  if (localized) out << report::FormatLocalization(*localized);
  out << report::FormatAttribution(attributed);
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
  std::optional<report::Localization> localized;
  if (merged->run_info.is_object() && merged->run_info.contains("localize")) {
    localized = Localization(o, merged->run_info["localize"], env.world_size);
  }
  std::vector<report::Comparison> compared;
  std::optional<NeighbourPrediction> neighbours;
  std::vector<report::IterationAttribution> attributed;
  if (complete || env.rank == 0) {
    compared = Compare(o, setup, env.world_size, merged->ops, merged->ranks, localized,
                       merged->run_info, &neighbours, &attributed);
  }
  nlohmann::json doc = report::BuildResultsJson(merged->run_info, merged->ops, merged->ranks,
                                                merged->clock_offsets_ns);
  for (const auto& c : compared) {
    doc[c.source.rfind("baseline", 0) == 0 ? "baseline" : "prediction"] = report::ToJson(c);
  }
  if (neighbours && doc.contains("prediction")) {
    NeighboursToJson(*neighbours, &doc["prediction"]);
    PrintNeighbours(std::cout, *neighbours);
  }
  if (doc.contains("prediction")) doc["attribution"] = report::AttributionJson(attributed);
  if (localized) doc["localization"] = report::LocalizationJson(*localized);
  Status st = report::WriteJsonFile(o.output + "/results.json", doc);
  if (st.ok() && !o.comparison_csv.empty() && !compared.empty()) {
    std::ofstream csv(o.comparison_csv);
    csv << report::ToCsv(compared.front());
    if (!csv) {
      std::cerr << "genie run: --csv " << o.comparison_csv
                << ": cannot write; check the folder exists and is writable\n";
    }
  }
  if (!st.ok()) {
    std::cerr << "genie run: " << st.message() << "\n";
    return 1;
  }
  if (!o.trace_out.empty()) {
    st = report::WriteChromeTrace(o.trace_out, merged->ops);
    if (!st.ok()) std::cerr << "genie run: " << st.message() << "\n";
  }
  if (!o.report.empty()) {
    // From the document just written, so the page shows what results.json holds.
    auto panel = report::html::RunPanel(doc, o.output + "/results.json", o.trace_out);
    Status rs =
        panel.ok() ? report::html::WriteReportFromPanels({*panel}, o.report) : panel.status();
    if (rs.ok()) {
      std::fprintf(stderr, "genie run: report: %s\n", o.report.c_str());
    } else {
      std::cerr << "genie run: --report: " << rs.message() << "\n";
    }
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
      for (const auto& c : compared) report::PrintComparison(std::cout, c);
    }
    return 0;
  }
  // The same lines `genie results show --astra-sim` prints for these results; ASTRA-sim's format
  // does not say what they add up, so a line before them does.
  std::cout << "# ASTRA-sim's lines: per rank, total over the "
            << report::StepTimes(merged->ranks).size()
            << " measured iteration(s) (1 cycle = 1 ns)\n";
  report::PrintAstraSimLines(std::cout, merged->ranks);
  PrintRunResults(
      std::cout, *merged, compared, localized,
      [&] {
        if (!o.predict) PrintPrediction(setup, o.network_model, merged->ranks, "");
      },
      attributed);
  return 0;
}

}  // namespace genie::driver
