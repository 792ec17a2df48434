#include "genie/driver/attribution_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "genie/record/recorder.h"
#include "genie/report/attribution_evidence.h"
#include "genie/report/doctor_findings.h"
#include "genie/report/iteration_probe_rtt.h"
#include "genie/report/iteration_timeouts.h"
#include "genie/report/ops_behind.h"
#include "genie/report/testbed_counters.h"

namespace genie::driver {
namespace {

// One simulation of one iteration under `m`, recorded. Like the per-iteration prediction, a
// measured issue order the model stalls on is dropped for the issue rules alone (`m` says so
// afterwards, so the next simulation of the iteration runs under the same conditions).
Result<TimeNs> SimulateIteration(const AttributionRun& run, MeasuredIteration* m,
                                 std::unique_ptr<record::Recorder>* rec) {
  auto once = [&]() -> Result<TimeNs> {
    GENIE_ASSIGN_OR_RETURN(*rec, record::Recorder::Create("", nlohmann::json::object()));
    GENIE_ASSIGN_OR_RETURN(SimulationStats s,
                           Simulate(run.setup, run.network, run.model, rec->get(),
                                    SimulatedIterations(1), m, run.input));
    return s.end_ns;
  };
  Result<TimeNs> end = once();
  if (!end.ok() && !m->issue_order.empty()) {
    m->issue_order.clear();
    end = once();
  }
  return end;
}

std::vector<const record::OpEvent*> Pointers(const std::vector<record::OpEvent>& ops) {
  std::vector<const record::OpEvent*> out;
  out.reserve(ops.size());
  for (const auto& e : ops) out.push_back(&e);
  return out;
}

std::vector<report::NetworkPlace> Places(const std::optional<report::Localization>& l) {
  std::vector<report::NetworkPlace> out;
  if (!l) return out;
  for (const report::Finding& f : l->verdict.findings) {
    std::string where = f.link;
    if (where.empty() && f.host >= 0 && f.host < static_cast<int>(l->scan.hosts.size())) {
      where = l->scan.hosts[f.host];
    }
    out.push_back({report::FindingName(f.kind), where, f.text});
  }
  return out;
}

// Hosts whose TCP sent again more than the doctor's loss threshold of its segments, with the
// retransmission timeouts among them: each stalls a connection for at least tcp_rto_min
// (200 ms), which is how a shallow queue's losses reach the step (a 256 KB tbf queue at
// 1 Gbit/s: 13 RTOs in 4 iterations of gpt_dp2_tp2_pp2, each step 1.2-1.7 x its prediction).
std::vector<std::string> Retransmits(const nlohmann::json& run_info) {
  std::vector<std::string> out;
  if (!run_info.is_object() || !run_info.contains("testbed")) return out;
  const double loss = report::DoctorThresholds{}.loss;
  for (const auto& [host, c] : report::TestbedHostCounters(run_info["testbed"])) {
    if (c.out_segs == 0 || static_cast<double>(c.retrans) <= loss * c.out_segs) continue;
    std::string line =
        fmt::format("{}: {} of its {} TCP segments sent again during the run ({:.2f} %)", host,
                    c.retrans, c.out_segs, 100.0 * c.retrans / c.out_segs);
    if (c.timeouts > 0) {
      line +=
          fmt::format(", {} retransmission timeout(s), each a stall of 200 ms or more", c.timeouts);
    }
    out.push_back(std::move(line));
  }
  return out;
}

// A run's ops and rank summaries of its measured iterations, by iteration (ranks 0..n-1).
struct ByIteration {
  std::map<int, std::vector<const record::OpEvent*>> ops;
  std::map<int, std::vector<const record::RankSummary*>> ranks;
};
ByIteration GroupByIteration(int n, const std::vector<record::OpEvent>& ops,
                             const std::vector<record::RankSummary>& ranks) {
  ByIteration out;
  for (const auto& e : ops) {
    if (e.iteration >= 0 && e.rank >= 0 && e.rank < n) out.ops[e.iteration].push_back(&e);
  }
  for (const auto& s : ranks) {
    if (s.iteration >= 0 && s.rank >= 0 && s.rank < n) out.ranks[s.iteration].push_back(&s);
  }
  return out;
}

// A recorded prediction's compute per rank and how late each rank's first op began: the
// trace's, against which the measured ones are judged.
struct TraceTiming {
  std::map<int, TimeNs> compute, first_op_delay;
};
TraceTiming TimingOf(const record::Recorder& rec) {
  const auto ops = Pointers(rec.ops());
  std::vector<const record::RankSummary*> ranks;
  for (const auto& s : rec.ranks()) ranks.push_back(&s);
  return {report::ComputeUnion(ops), report::FirstOpDelays(ops, ranks)};
}

// Each rank's measured compute and late start in one iteration (`ops`, `summaries`) against
// `trace`; a rank without a compute op in the trace is judged by its late start alone.
std::vector<report::RankCompute> RankComputes(
    int n, const std::vector<const record::OpEvent*>& ops,
    const std::vector<const record::RankSummary*>& summaries, const TraceTiming& trace) {
  auto at = [](const std::map<int, TimeNs>& m, int r) {
    auto i = m.find(r);
    return i == m.end() ? TimeNs{0} : i->second;
  };
  const auto measured = report::ComputeUnion(ops);
  const auto delay = report::FirstOpDelays(ops, summaries);
  std::vector<report::RankCompute> out;
  for (int r = 0; r < n; ++r) {
    report::RankCompute c;
    c.rank = r;
    c.measured_ns = at(measured, r);
    c.trace_ns = trace.compute.count(r) ? trace.compute.at(r) : c.measured_ns;
    c.late_start_ns = std::max<TimeNs>(0, at(delay, r) - at(trace.first_op_delay, r));
    for (const record::RankSummary* s : summaries) {
      if (s->rank == r) c.cpu_wait_ns = s->cpu_wait_ns;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::set<int> StraggledIterations(int n, const std::vector<record::OpEvent>& ops,
                                  const std::vector<record::RankSummary>& ranks,
                                  const record::Recorder& healthy, TimeNs healthy_step_ns,
                                  double floor) {
  std::set<int> out;
  if (healthy_step_ns <= 0 || n <= 0) return out;
  const TraceTiming trace = TimingOf(healthy);
  ByIteration by = GroupByIteration(n, ops, ranks);
  for (const auto& [iteration, of_ranks] : by.ranks) {
    std::vector<TimeNs> excess;
    for (const report::RankCompute& c : RankComputes(n, by.ops[iteration], of_ranks, trace)) {
      excess.push_back(c.excess_ns());
    }
    // Beyond the iteration's median rank: ranks all late alike (8 on 2 busy cores, each
    // waking late from its sleeps) straggle behind none of the others.
    std::vector<TimeNs> sorted = excess;  // the lower median: of two ranks, the other one
    const size_t mid = static_cast<size_t>((n - 1) / 2);
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(mid), sorted.end());
    const TimeNs median = sorted[mid];
    for (TimeNs e : excess) {
      if (static_cast<double>(e - median) > floor * static_cast<double>(healthy_step_ns)) {
        out.insert(iteration);
        break;
      }
    }
  }
  return out;
}

std::vector<report::IterationAttribution> AttributeSlowIterations(
    const AttributionRun& run, const report::Comparison& compared,
    const std::optional<report::Localization>& localized, const nlohmann::json& run_info,
    const std::map<int, report::Contention>& contention) {
  const int n = run.setup.world_size();
  ByIteration by = GroupByIteration(n, run.ops, run.ranks);
  std::map<int, TimeNs> first_start;
  for (const auto& [iteration, summaries] : by.ranks) {
    TimeNs first = summaries.front()->start;
    for (const record::RankSummary* s : summaries) first = std::min(first, s->start);
    first_start[iteration] = first;
  }
  const std::vector<report::NetworkPlace> places = Places(localized);
  const std::vector<std::string> retransmits = Retransmits(run_info);
  const std::map<int, report::IterationTimeouts> timeouts = report::TimeoutsPerIteration(run.ranks);
  const std::map<int, report::IterationProbeRtt> probes = report::ProbeRttPerIteration(run.ranks);

  std::vector<report::IterationAttribution> out;
  for (const report::IterationComparison& ic : compared.iterations) {
    if (out.size() >= kAttributedMax) break;
    auto k = contention.find(ic.iteration);
    const TimeNs healthy = k != contention.end() ? k->second.alone_ns : ic.expected_ns;
    if (healthy <= 0 || static_cast<double>(ic.measured_ns) <=
                            (1 + compared.threshold) * static_cast<double>(healthy)) {
      continue;
    }
    auto m = run.measured.find(ic.iteration);
    if (m == run.measured.end()) continue;
    const std::vector<const record::OpEvent*>& ops = by.ops[ic.iteration];

    report::AttributionInput in;
    in.iteration = ic.iteration;
    in.measured_ns = ic.measured_ns;
    in.expected_ns = healthy;
    if (k != contention.end()) in.contention = k->second;
    for (auto& [rank, w] : report::CollectiveWaits(ops)) in.waits.push_back(w);
    in.places = places;
    in.probed = localized.has_value();
    in.retransmits = retransmits;
    if (auto t = timeouts.find(ic.iteration); t != timeouts.end()) {
      in.timeouts = report::DescribeTimeouts(t->second);
    }
    if (auto p = probes.find(ic.iteration); p != probes.end()) {
      in.probe_rtt = report::DescribeProbeRtt(p->second);
    }

    // E0 again, recorded: the trace's compute per rank and when each rank's first op began.
    MeasuredIteration conditions = m->second;
    conditions.iteration = 0;  // no compute fault: the healthy expectation
    std::unique_ptr<record::Recorder> rec;
    auto e0 = SimulateIteration(run, &conditions, &rec);
    in.compute =
        RankComputes(n, ops, by.ranks[ic.iteration], e0.ok() ? TimingOf(*rec) : TraceTiming{});

    // Ec: the same conditions with each rank's measured compute and first-op delay.
    if (e0.ok()) {
      MeasuredIteration with = conditions;
      with.compute_ns.assign(n, {});
      for (auto& [rank, durations] : report::EffectiveComputeDurations(ops)) {
        with.compute_ns[rank] = std::move(durations);
      }
      if (with.start_ns.empty()) with.start_ns.assign(n, 0);
      for (const report::RankCompute& c : in.compute) with.start_ns[c.rank] += c.late_start_ns;
      auto ec = SimulateIteration(run, &with, &rec);
      if (ec.ok()) {
        // On E0's footing: the comparison's expectation plus what the measured compute adds.
        in.with_compute_ns = healthy + (*ec - *e0);
        in.behind =
            report::OpsBehind(ops, first_start[ic.iteration], rec->ops(), report::kOpsBehindKept);
      } else {
        std::cerr << "genie run: attribution: iteration " << ic.iteration
                  << " with its measured compute could not be simulated (" << ec.status().message()
                  << "); its compute share is bounded by the rank furthest behind its trace\n";
      }
    } else {
      std::cerr << "genie run: attribution: iteration " << ic.iteration
                << " could not be simulated again (" << e0.status().message()
                << "); its compute share is bounded by the rank furthest behind its trace\n";
    }
    if (in.behind.empty()) in.behind = ic.behind;
    out.push_back(report::Attribute(in));
  }
  return out;
}

std::map<int, TimeNs> WhatIfSteps(const AttributionRun& run) {
  std::map<int, TimeNs> out;
  if (!run.setup.exec.compute_faults) return out;
  for (const auto& [iteration, m] : run.measured) {
    if (out.size() >= kAttributedMax) break;
    MeasuredIteration what_if = m;
    what_if.iteration = iteration + 1;  // its compute faults, counted from 1
    std::unique_ptr<record::Recorder> rec;
    auto end = SimulateIteration(run, &what_if, &rec);
    if (end.ok()) out[iteration] = *end;
  }
  return out;
}

std::map<int, report::Contention> ContentionFromPrediction(const nlohmann::json& prediction) {
  std::map<int, report::Contention> out;
  if (!prediction.is_object()) return out;
  // The neighbours: the jobs simulation's ("neighbours": {"jobs": [names], ...}), or "alone"'s
  // ({"neighbours": [{"job", "links"}]}).
  std::vector<report::Neighbour> neighbours;
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& n = prediction.contains("neighbours") ? prediction["neighbours"] : none;
  if (n.is_object() && n.contains("jobs") && n["jobs"].is_array()) {
    for (const auto& job : n["jobs"]) {
      if (job.is_string()) neighbours.push_back({job.get<std::string>(), {}});
    }
  }
  const nlohmann::json& alone =
      prediction.contains("alone") && prediction["alone"].is_object() ? prediction["alone"] : none;
  for (const auto& j : alone.value("neighbours", nlohmann::json::array())) {
    if (!j.is_object()) continue;
    neighbours.push_back({j.value("job", ""), j.value("links", std::vector<std::string>{})});
  }
  std::map<int, TimeNs> alone_of;
  for (const auto& j : alone.value("iterations", nlohmann::json::array())) {
    if (j.is_object()) alone_of[j.value("iteration", 0)] = j.value("expected_step_ns", TimeNs{0});
  }
  const TimeNs alone_step = alone.value("step_ns", TimeNs{0});
  for (const auto& j : prediction.value("iterations", nlohmann::json::array())) {
    if (!j.is_object()) continue;
    const int iteration = j.value("iteration", 0);
    // Per iteration beside the together expectation, or from "alone".
    TimeNs alone_ns = j.value("expected_alone_step_ns", TimeNs{0});
    if (alone_ns <= 0) {
      auto a = alone_of.find(iteration);
      alone_ns = a != alone_of.end() ? a->second : alone_step;
    }
    if (alone_ns <= 0) continue;
    out[iteration] = {j.value("expected_step_ns", TimeNs{0}), alone_ns, neighbours};
  }
  return out;
}

}  // namespace genie::driver
