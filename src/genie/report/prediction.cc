#include "genie/report/prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "genie/report/bandwidth.h"
#include "genie/report/cpu_bound.h"
#include "genie/report/iteration_probe_rtt.h"
#include "genie/report/iteration_timeouts.h"

namespace genie::report {
namespace {

std::vector<TimeNs> MeasuredStepsOf(const nlohmann::json& results) {
  std::vector<TimeNs> steps;
  if (!results.is_object() || !results.contains("iterations")) return steps;
  for (const auto& it : results["iterations"]) {
    if (it.value("iteration", -1) < 0) continue;
    steps.push_back(it.value("step_time_ns", TimeNs{0}));
  }
  return steps;
}

}  // namespace

Expectation ExpectationFromSimulation(std::string source, TimeNs step_ns,
                                      const std::vector<record::OpEvent>& ops) {
  Expectation e;
  e.source = std::move(source);
  e.step_ns = step_ns;
  e.types = CollectiveTypeTable(ops);
  return e;
}

Result<Expectation> ExpectationFromResults(std::string source, const nlohmann::json& results) {
  std::vector<TimeNs> steps = MeasuredStepsOf(results);
  if (steps.empty()) {
    return Status::InvalidArgument(source +
                                   ": no measured iterations in it; pass the results.json of a "
                                   "finished healthy run");
  }
  Expectation e;
  e.source = std::move(source);
  e.step_ns = SpreadOf(steps).median;
  if (results.contains("collective_types")) {
    for (const auto& t : results["collective_types"]) {
      TypeRow row;
      row.type = t.value("type", "");
      row.count = t.value("count", int64_t{0});
      row.busbw_gbps = t.value("busbw_gbps", 0.0);
      e.types.push_back(row);
    }
  }
  return e;
}

Comparison Compare(const std::vector<record::OpEvent>& ops,
                   const std::vector<record::RankSummary>& ranks, const Expectation& expected,
                   double threshold) {
  Comparison c;
  c.source = expected.source;
  c.threshold = threshold;
  std::map<std::string, double> expected_busbw;
  for (const auto& t : expected.types) expected_busbw[t.type] = t.busbw_gbps;
  std::map<int, std::vector<record::OpEvent>> ops_of;
  for (const auto& e : ops) {
    if (e.iteration >= 0 && e.is_comm()) ops_of[e.iteration].push_back(e);
  }
  std::map<int, double> cpu_wait_of;
  for (const CpuBoundIteration& b : CpuBoundIterations(ranks)) cpu_wait_of[b.iteration] = b.fraction();
  const std::map<int, IterationTimeouts> timeouts = TimeoutsPerIteration(ranks);
  const std::map<int, IterationProbeRtt> probes = ProbeRttPerIteration(ranks);
  for (const IterationStep& s : StepTimes(ranks)) {
    if (s.iteration < 0) continue;
    IterationComparison ic;
    ic.iteration = s.iteration;
    if (auto w = cpu_wait_of.find(s.iteration); w != cpu_wait_of.end()) ic.cpu_wait_fraction = w->second;
    if (auto t = timeouts.find(s.iteration); t != timeouts.end()) ic.tcp_timeouts = t->second.total;
    if (auto p = probes.find(s.iteration); p != probes.end()) {
      ic.probe_rtt_episodes = p->second.episodes;
      ic.probe_rtt_ns = p->second.ns;
    }
    ic.measured_ns = s.step_ns();
    auto own = expected.step_ns_of_iteration.find(s.iteration);
    ic.expected_ns = own != expected.step_ns_of_iteration.end() ? own->second : expected.step_ns;
    ic.ratio = ic.expected_ns > 0
                   ? static_cast<double>(ic.measured_ns) / static_cast<double>(ic.expected_ns)
                   : 0.0;
    ic.slow = ic.ratio > 1.0 + threshold;
    for (const TypeRow& row : CollectiveTypeTable(ops_of[s.iteration])) {
      if (!row.times_a_transfer()) continue;
      auto want = expected_busbw.find(row.type);
      if (want == expected_busbw.end() || want->second <= 0) continue;
      OpComparison oc;
      oc.type = row.type;
      oc.measured_busbw_gbps = row.busbw_gbps;
      oc.expected_busbw_gbps = want->second;
      oc.slowdown = row.busbw_gbps > 0 ? want->second / row.busbw_gbps : 0.0;
      oc.slow = oc.slowdown > 1.0 + threshold;
      ic.ops.push_back(oc);
    }
    if (ic.slow) ++c.flagged;
    c.iterations.push_back(std::move(ic));
  }
  return c;
}

void PrintComparison(std::ostream& out, const Comparison& c) {
  out << fmt::format(
      "\n# measured beside expected ({}), per iteration (step time; busbw in GB/s); SLOW = more "
      "than {:.2f}x expected\n",
      c.source, 1.0 + c.threshold);
  for (const auto& note : c.notes) out << "# note: " << note << "\n";
  std::string head = "#  iter     measured     expected  ratio";  // per iteration
  if (!c.iterations.empty()) {
    for (const auto& op : c.iterations.front().ops) {
      head += fmt::format("  {:>24}", op.type + " busbw meas/exp");
    }
  }
  out << head << "\n";
  for (const auto& it : c.iterations) {
    std::string line =
        fmt::format("  {:>5} {:>12} {:>12} {:>6.2f}", it.iteration, FormatDuration(it.measured_ns),
                    FormatDuration(it.expected_ns), it.ratio);
    bool op_slow = false;
    for (const auto& op : it.ops) {
      line += fmt::format("  {:>11} / {:<10}", FormatBandwidth(op.measured_busbw_gbps),
                          FormatBandwidth(op.expected_busbw_gbps));
      op_slow = op_slow || op.slow;
    }
    if (it.slow) {
      line += "  SLOW";
    } else if (op_slow) {
      line += "  SLOW (op)";
    }
    if (it.cpu_wait_fraction > 0) line += fmt::format("  CPU {:.0f} %", 100 * it.cpu_wait_fraction);
    if (it.tcp_timeouts > 0) line += fmt::format("  RTO {}", it.tcp_timeouts);
    if (it.probe_rtt_episodes > 0) line += fmt::format("  PROBE_RTT {}", it.probe_rtt_episodes);
    out << line << "\n";
  }
  out << fmt::format("# {} of {} iterations slower than expected\n", c.flagged,
                     c.iterations.size());
  // A legend line for each mark some iteration carries, with how many carry it.
  auto legend = [&](auto marked, const char* text) {
    const auto n = std::count_if(c.iterations.begin(), c.iterations.end(), marked);
    if (n > 0) out << fmt::format(fmt::runtime(text), n);
  };
  legend([](const auto& it) { return it.cpu_wait_fraction > 0; },
         "# CPU = a rank waited for a core that share of the step ({} iterations): their time is "
         "this machine's CPU as well as the network's, not evidence against the network\n");
  legend([](const auto& it) { return it.tcp_timeouts > 0; },
         "# RTO = TCP retransmission timeouts the hosts counted in the iteration ({} "
         "iterations): each stalls a connection for 200 ms or more, which the model (no losses) "
         "does not predict; the links' queues dropped (deeper queues avoid it)\n");
  legend([](const auto& it) { return it.probe_rtt_episodes > 0; },
         "# PROBE_RTT = connections with data waiting in bbr's PROBE_RTT during the iteration ({} "
         "iterations): bbr holds each to 4 packets in flight for ~200 ms every ~10 s, the "
         "transport's own pause, not a fault; the expectation places it where it was\n");
  // The what-if: the same iterations predicted under the run's --faults compute faults.
  std::string what_if;
  for (const auto& it : c.iterations) {
    if (it.what_if_ns > 0) {
      what_if += fmt::format("{}{}: {}", what_if.empty() ? "" : ", ", it.iteration,
                             FormatDuration(it.what_if_ns));
    }
  }
  if (!what_if.empty()) {
    out << "# what-if, predicted with the --faults compute faults (not what is judged above): "
        << what_if << "\n";
  }
  std::vector<std::vector<OpBehind>> behind;
  for (const auto& it : c.iterations) behind.push_back(it.behind);
  out << FormatOpsBehind(FurthestBehind(behind, kOpsBehindPrinted));
}

std::string ToCsv(const Comparison& c) {
  std::string out =
      "iteration,measured_step_ns,expected_step_ns,ratio,type,measured_busbw_gbps,"
      "expected_busbw_gbps,slow\n";
  for (const auto& it : c.iterations) {
    auto row = [&](const std::string& type, double measured, double expected, bool slow) {
      out += fmt::format("{},{},{},{:.4f},{},{:.6f},{:.6f},{}\n", it.iteration, it.measured_ns,
                         it.expected_ns, it.ratio, type, measured, expected, slow ? 1 : 0);
    };
    if (it.ops.empty()) row("", 0, 0, it.slow);
    for (const auto& op : it.ops) {
      row(op.type, op.measured_busbw_gbps, op.expected_busbw_gbps, it.slow || op.slow);
    }
  }
  return out;
}

nlohmann::json ToJson(const Comparison& c) {
  nlohmann::json iters = nlohmann::json::array();
  std::vector<int> flagged;
  for (const auto& it : c.iterations) {
    nlohmann::json op_list = nlohmann::json::array();
    for (const auto& op : it.ops) {
      op_list.push_back({{"type", op.type},
                         {"measured_busbw_gbps", op.measured_busbw_gbps},
                         {"expected_busbw_gbps", op.expected_busbw_gbps},
                         {"slowdown", op.slowdown},
                         {"slow", op.slow}});
    }
    nlohmann::json row = {{"iteration", it.iteration},
                          {"measured_step_ns", it.measured_ns},
                          {"expected_step_ns", it.expected_ns},
                          {"ratio", it.ratio},
                          {"slow", it.slow},
                          {"ops", std::move(op_list)}};
    if (!it.behind.empty()) {
      nlohmann::json behind = nlohmann::json::array();
      for (const auto& op : it.behind) behind.push_back(ToJson(op));
      row["ops_behind"] = std::move(behind);
    }
    if (it.what_if_ns > 0) row["what_if_step_ns"] = it.what_if_ns;
    if (it.cpu_wait_fraction > 0) row["cpu_wait_fraction"] = it.cpu_wait_fraction;
    if (it.tcp_timeouts > 0) row["tcp_timeouts"] = it.tcp_timeouts;
    if (it.probe_rtt_episodes > 0) {
      row["probe_rtt_episodes"] = it.probe_rtt_episodes;
      row["probe_rtt_ns"] = it.probe_rtt_ns;
    }
    iters.push_back(std::move(row));
    if (it.slow) flagged.push_back(it.iteration);
  }
  nlohmann::json out = {{"source", c.source},
                        {"threshold", c.threshold},
                        {"flagged_iterations", flagged},
                        {"iterations", std::move(iters)}};
  if (!c.notes.empty()) out["notes"] = c.notes;
  if (!c.calibration_settings.empty()) out["calibration_settings"] = c.calibration_settings;
  return out;
}

Comparison ComparisonFromJson(const nlohmann::json& j) {
  Comparison c;
  if (!j.is_object()) return c;
  c.source = j.value("source", "");
  c.threshold = j.value("threshold", kDefaultFlagThreshold);
  if (j.contains("notes") && j["notes"].is_array()) {
    for (const auto& n : j["notes"]) {
      if (n.is_string()) c.notes.push_back(n.get<std::string>());
    }
  }
  if (j.contains("calibration_settings") && j["calibration_settings"].is_object()) {
    for (const auto& [k, v] : j["calibration_settings"].items()) {
      if (v.is_string()) c.calibration_settings[k] = v.get<std::string>();
    }
  }
  if (!j.contains("iterations") || !j["iterations"].is_array()) return c;
  for (const auto& it : j["iterations"]) {
    IterationComparison ic;
    ic.iteration = it.value("iteration", 0);
    ic.measured_ns = it.value("measured_step_ns", TimeNs{0});
    ic.expected_ns = it.value("expected_step_ns", TimeNs{0});
    ic.what_if_ns = it.value("what_if_step_ns", TimeNs{0});
    ic.ratio = it.value("ratio", 0.0);
    ic.cpu_wait_fraction = it.value("cpu_wait_fraction", 0.0);
    ic.tcp_timeouts = it.value("tcp_timeouts", int64_t{0});
    ic.probe_rtt_episodes = it.value("probe_rtt_episodes", int64_t{0});
    ic.probe_rtt_ns = it.value("probe_rtt_ns", TimeNs{0});
    ic.slow = it.value("slow", false);
    if (it.contains("ops") && it["ops"].is_array()) {
      for (const auto& op : it["ops"]) {
        OpComparison oc;
        oc.type = op.value("type", "");
        oc.measured_busbw_gbps = op.value("measured_busbw_gbps", 0.0);
        oc.expected_busbw_gbps = op.value("expected_busbw_gbps", 0.0);
        oc.slowdown = op.value("slowdown", 0.0);
        oc.slow = op.value("slow", false);
        ic.ops.push_back(oc);
      }
    }
    if (it.contains("ops_behind") && it["ops_behind"].is_array()) {
      for (const auto& op : it["ops_behind"]) ic.behind.push_back(OpBehindFromJson(op));
    }
    if (ic.slow) ++c.flagged;
    c.iterations.push_back(std::move(ic));
  }
  return c;
}

}  // namespace genie::report
