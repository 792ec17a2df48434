#include "genie/report/summary.h"

#include <fmt/format.h>

#include "genie/record/json_check.h"
#include "genie/report/statistics.h"

namespace genie::report {

namespace {

std::string SpreadLine(const char* what, const Spread& s) {
  return fmt::format("{:<26} min {:>12}   median {:>12}   max {:>12}\n", what,
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
  out << "# " << SpreadLine("step time", SpreadOf(step_ns));
  out << "# " << SpreadLine("exposed comm per rank", SpreadOf(exposed));
  out << "# " << SpreadLine("compute per rank", SpreadOf(compute));
  out << "# " << SpreadLine("comm busy per rank", SpreadOf(comm));

  std::vector<TypeRow> rows = CollectiveTypeTable(ops);
  out << "#\n";
  out << fmt::format("# {:>20} {:>10} {:>16} {:>12} {:>8} {:>8}\n", "collective", "count", "size",
                     "time", "algbw", "busbw");
  out << fmt::format("# {:>20} {:>10} {:>16} {:>12} {:>8} {:>8}\n", "", "(rank-ops)", "(B, mean)",
                     "(us, mean)", "(GB/s)", "(GB/s)");
  double bus_sum = 0;
  for (const TypeRow& r : rows) {
    out << fmt::format("  {:>20} {:>10} {:>16} {:>12.2f} {:>8.2f} {:>8.2f}\n", r.type, r.count,
                       r.count > 0 ? r.bytes / static_cast<Bytes>(r.count) : 0, r.mean_ns / 1000.0,
                       r.algbw_gbps, r.busbw_gbps);
    bus_sum += r.busbw_gbps;
  }
  if (rows.empty()) out << "  (no communication recorded)\n";
  out << fmt::format("# Avg bus bandwidth    : {:.4g} \n",
                     rows.empty() ? 0.0 : bus_sum / static_cast<double>(rows.size()));
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
  out << "# traffic: " << FormatBytes(network) << " over the network, " << FormatBytes(modelled)
      << " modelled inside hosts (" << traffic.size() << " ranks)\n";
}

}  // namespace genie::report
