#include "genie/report/summary.h"

#include <map>
#include <tuple>

#include <fmt/format.h>

#include "genie/record/cpu_steal.h"
#include "genie/record/json_check.h"
#include "genie/report/bandwidth.h"
#include "genie/report/cpu_bound.h"
#include "genie/report/statistics.h"
#include "genie/report/testbed_counters.h"

namespace genie::report {

namespace {

std::string SpreadLine(const std::string& what, const Spread& s) {
  return fmt::format("{:<48} min {:>12}   median {:>12}   max {:>12}\n", what,
                     FormatDuration(s.min), FormatDuration(s.median), FormatDuration(s.max));
}

}  // namespace

void PrintSummary(std::ostream& out, const std::vector<record::OpEvent>& ops,
                  const std::vector<record::RankSummary>& ranks) {
  std::vector<RankTotals> totals = TotalsPerRank(ranks);
  std::vector<IterationStep> steps = StepTimes(ranks);
  std::vector<TimeNs> step_ns, exposed, compute, comm;
  for (const auto& s : steps) step_ns.push_back(s.step_ns());
  for (const auto& t : totals) {
    exposed.push_back(t.exposed_comm_ns);
    compute.push_back(t.compute_ns);
    comm.push_back(t.comm_ns);
  }
  out << fmt::format("# genie results: {} ranks, {} measured iteration{}\n", totals.size(),
                     steps.size(), steps.size() == 1 ? "" : "s");
  // Every line says what it is over: one iteration, or a rank's total over the iterations.
  const std::string total =
      fmt::format(", total over {} iteration{}", steps.size(), steps.size() == 1 ? "" : "s");
  out << "# " << SpreadLine("step time, per iteration", SpreadOf(step_ns));
  out << "# " << SpreadLine("exposed comm per rank" + total, SpreadOf(exposed));
  out << "# " << SpreadLine("compute per rank" + total, SpreadOf(compute));
  out << "# " << SpreadLine("comm busy per rank" + total, SpreadOf(comm));

  std::vector<TypeRow> rows = CollectiveTypeTable(ops);
  out << "#\n";
  out << fmt::format("# {:>20} {:>10} {:>16} {:>12} {:>8} {:>8}\n", "collective", "count", "size",
                     "time", "algbw", "busbw");
  out << fmt::format("# {:>20} {:>10} {:>16} {:>12} {:>8} {:>8}\n", "", "(rank-ops)", "(B, mean)",
                     "(us per op)", "(GB/s)", "(GB/s)");
  double bus_sum = 0;
  size_t averaged = 0;
  for (const TypeRow& r : rows) {
    out << fmt::format("  {:>20} {:>10} {:>16} {:>12.2f} {:>8} {:>8}\n", r.type, r.count,
                       r.count > 0 ? r.bytes / static_cast<Bytes>(r.count) : 0, r.mean_ns / 1000.0,
                       FormatBandwidth(r.algbw_gbps), FormatBandwidth(r.busbw_gbps));
    if (!r.times_a_transfer()) continue;
    bus_sum += r.busbw_gbps;
    ++averaged;
  }
  if (rows.empty()) out << "  (no communication recorded)\n";
  out << "# Avg bus bandwidth    : "
      << FormatBandwidth(averaged == 0 ? 0.0 : bus_sum / static_cast<double>(averaged))
      << (averaged < rows.size() ? " GB/s (mean over the types above but send: its recv times the transfer)\n"
                : " GB/s (mean over the types above)\n");
  PrintCpuBound(out, ranks);
}

void PrintTraffic(std::ostream& out, const nlohmann::json& traffic) {
  if (!traffic.is_array() || traffic.empty()) return;
  uint64_t network = 0, modelled = 0;
  for (const auto& rank : traffic) {
    if (!rank.is_object() || !rank.contains("peers") || !rank["peers"].is_array()) continue;
    for (const auto& p : rank["peers"]) {
      network += record::UintField(p, "network_bytes_sent", 0);
      modelled += record::UintField(p, "modelled_bytes_sent", 0);
    }
  }
  out << "# traffic, total over the run: " << FormatBytes(network) << " over the network, "
      << FormatBytes(modelled) << " modelled inside hosts (" << traffic.size() << " ranks)\n";
  // The most stolen rank's machine: every rank on it waited for the CPU as long.
  double steal = -1;
  int at = -1;
  for (const auto& rank : traffic) {
    if (!rank.is_object() || !rank.contains("cpu_steal") || !rank["cpu_steal"].is_object()) continue;
    const double f = rank["cpu_steal"].value("steal_fraction", -1.0);
    if (f > steal) {
      steal = f;
      at = static_cast<int>(record::IntField(rank, "rank", -1));
    }
  }
  if (steal > record::kNotableStealFraction) {
    out << fmt::format(
        "# CPU steal: {:.1f} % of the CPU time of rank {}'s machine went to other guests of its "
        "hypervisor during the run; the ranks' software waited for it, so measured times include "
        "it and a prediction does not: compare with care, or measure again on a quieter machine\n",
        100 * steal, at);
  }
}

TimeNs FirstStart(const std::vector<record::OpEvent>& ops) {
  TimeNs first = 0;
  for (const auto& e : ops) {
    if (first == 0 || e.start < first) first = e.start;
  }
  return first;
}

void PrintComputeFaults(std::ostream& out, const nlohmann::json& events,
                        const std::vector<record::RankSummary>& ranks, TimeNs origin_ns) {
  if (!events.is_array() || events.empty()) return;
  // Each (entry, action, iteration) once, with its ranks and its earliest time.
  struct Line {
    std::string fault, action, reason;
    std::vector<int64_t> ranks;
    TimeNs at = 0;
  };
  std::map<std::tuple<int64_t, int64_t, std::string>, Line> lines;
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    const TimeNs at = record::IntField(e, "at_ns", 0);
    Line& l = lines[{record::IntField(e, "iteration", 0), record::IntField(e, "entry", 0),
                     e.value("action", "?")}];
    if (l.ranks.empty() || at < l.at) l.at = at;
    l.fault = e.value("fault", "?");
    l.action = e.value("action", "?");
    l.reason = e.value("reason", "");
    l.ranks.push_back(record::IntField(e, "rank", 0));
  }
  out << "# compute faults\n";
  for (const auto& [key, l] : lines) {
    if (l.action == "not applied") {
      out << "#   compute fault NOT APPLIED: " << l.fault << " — " << l.reason << "\n";
      continue;
    }
    const std::string who = l.ranks.size() == 1 ? fmt::format("rank {}", l.ranks[0])
                                                : fmt::format("{} ranks", l.ranks.size());
    out << fmt::format("#   compute fault at {:+.3f} s: {} {} (iteration {}, {})\n",
                       static_cast<double>(l.at - origin_ns) / 1e9, l.action, l.fault,
                       std::get<0>(key), who);
  }
  // What the faults cost each rank, against the trace's compute of the same iterations.
  struct Cost {
    int iterations = 0;
    TimeNs compute = 0, excess = 0, stall = 0;
  };
  std::map<int, Cost> costs;
  for (const auto& r : ranks) {
    if (r.iteration < 0 || (r.compute_excess_ns == 0 && r.stall_ns == 0)) continue;
    Cost& c = costs[r.rank];
    ++c.iterations;
    c.compute += r.compute_ns;
    c.excess += r.compute_excess_ns;
    c.stall += r.stall_ns;
  }
  for (const auto& [rank, c] : costs) {
    const TimeNs traced = c.compute - c.excess;
    std::string line = fmt::format("#   rank {}: in {} iteration(s) ", rank, c.iterations);
    if (c.excess != 0) {
      line += fmt::format("compute {}{} over the trace's {} ({:.3f}x)", c.excess > 0 ? "+" : "-",
                          FormatDuration(c.excess > 0 ? c.excess : -c.excess),
                          FormatDuration(traced),
                          traced > 0 ? static_cast<double>(c.compute) / traced : 0.0);
    }
    if (c.stall > 0) line += (c.excess != 0 ? ", " : "") + ("stalled " + FormatDuration(c.stall));
    out << line << "\n";
  }
}

void PrintTestbed(std::ostream& out, const nlohmann::json& testbed, TimeNs origin_ns) {
  if (!testbed.is_object()) return;
  out << fmt::format("# testbed {} ({}, {})\n", testbed.value("name", "?"),
                     testbed.value("topology", "?"),
                     FormatBitRate(record::UintField(testbed, "rate_bps", 0)));
  if (testbed.contains("faults") && testbed["faults"].is_array()) {
    for (const auto& f : testbed["faults"]) {
      if (!f.is_object()) continue;
      if (f.value("action", "") == "not applied") {  // never took effect: say so, and why
        out << "#   fault NOT APPLIED: " << f.value("fault", "?") << " — "
            << f.value("reason", "no reason recorded") << "\n";
        continue;
      }
      const double t = static_cast<double>(record::IntField(f, "at_ns", 0) - origin_ns) / 1e9;
      std::string line = fmt::format("#   fault at {:+.3f} s: {} {}", t, f.value("action", "?"),
                                     f.value("fault", "?"));
      if (f.contains("iteration")) line += fmt::format(" (iteration {})", f["iteration"].dump());
      if (f.contains("error")) line += " — FAILED: " + f.value("error", "");
      out << line << "\n";
    }
  }
  if (testbed.contains("counters_error")) {
    out << "#   counters not read: " << testbed.value("counters_error", "") << "\n";
  }
  const std::map<std::string, HostCounters> hosts = TestbedHostCounters(testbed);
  if (hosts.empty()) return;
  out << fmt::format("#   {:<6} {:>12} {:>12} {:>10} {:>12} {:>10} {:>6}\n", "host", "NIC tx",
                     "NIC rx", "tbf drops", "TCP segs", "retrans", "RTOs");
  for (const auto& [name, r] : hosts) {
    out << fmt::format("#   {:<6} {:>12} {:>12} {:>10} {:>12} {:>10} {:>6}\n", name,
                       FormatBytes(r.tx_bytes), FormatBytes(r.rx_bytes), r.drops, r.out_segs,
                       r.retrans, r.timeouts);
  }
}

}  // namespace genie::report
