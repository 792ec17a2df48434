#include "genie/report/results_json.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "genie/record/event_json.h"
#include "genie/report/atomic_file.h"
#include "genie/report/bandwidth.h"
#include "genie/report/cpu_bound.h"
#include "genie/report/completeness.h"
#include "genie/report/network_settings.h"
#include "genie/report/statistics.h"

namespace genie::report {

using nlohmann::json;

namespace {

json SpreadJson(const Spread& s) {
  return {{"min", s.min}, {"median", s.median}, {"max", s.max}};
}

}  // namespace

json ResultsJsonWithoutCollectives(const json& run_info, const std::vector<TypeRow>& types,
                                   const Completeness& completeness,
                                   const std::vector<record::RankSummary>& ranks,
                                   const json& clock_offsets_ns) {
  json doc;
  doc["format"] = kResultsFormat;
  doc["version"] = kResultsVersion;
  doc["provenance"] = run_info;
  doc["clock_offsets_ns"] = clock_offsets_ns.is_null() ? json::object() : clock_offsets_ns;
  // Whether every rank and iteration the run was started with is in here (completeness.h).
  doc["completeness"] = CompletenessJson(completeness);
  // The hosts' congestion control and ECN, the links' qdiscs (network_settings.h).
  if (json settings = NetworkSettingsFromProvenance(run_info); !settings.is_null()) {
    doc["network_settings"] = std::move(settings);
  }

  // Per rank: totals over measured iterations, then each iteration (warm-ups included, marked
  // by a negative iteration number).
  std::vector<record::RankSummary> sorted_ranks = ranks;
  std::sort(sorted_ranks.begin(), sorted_ranks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.rank, a.iteration) < std::tie(b.rank, b.iteration);
  });
  std::vector<RankTotals> totals = TotalsPerRank(ranks);
  json rank_list = json::array();
  std::vector<TimeNs> exposed;
  for (const RankTotals& t : totals) {
    json iters = json::array();
    for (const auto& s : sorted_ranks) {
      if (s.rank == t.rank) iters.push_back(record::ToJson(s));
    }
    json rank = {{"rank", t.rank},
                 {"start", t.start},
                 {"finish", t.finish},
                 {"compute_ns", t.compute_ns},
                 {"comm_ns", t.comm_ns},
                 {"exposed_comm_ns", t.exposed_comm_ns}};
    // Under compute faults only (each iteration's are in its entry).
    if (t.compute_excess_ns != 0) rank["compute_excess_ns"] = t.compute_excess_ns;
    if (t.stall_ns != 0) rank["stall_ns"] = t.stall_ns;
    rank["iterations"] = std::move(iters);
    rank_list.push_back(std::move(rank));
    exposed.push_back(t.exposed_comm_ns);
  }

  std::vector<IterationStep> steps = StepTimes(ranks);
  json iter_list = json::array();
  std::vector<TimeNs> step_ns;
  for (const auto& s : steps) {
    iter_list.push_back({{"iteration", s.iteration},
                         {"start", s.start},
                         {"finish", s.finish},
                         {"step_time_ns", s.step_ns()}});
    step_ns.push_back(s.step_ns());
  }

  json type_list = json::array();
  for (const TypeRow& r : types) {
    type_list.push_back({{"type", r.type},
                         {"count", r.count},
                         {"bytes", r.bytes},
                         {"total_time_ns", r.total_ns},
                         {"mean_time_ns", r.mean_ns},
                         {"algbw_gbps", r.algbw_gbps},
                         {"busbw_gbps", r.busbw_gbps}});
  }

  doc["summary"] = {{"ranks", totals.size()},
                    {"iterations", steps.size()},
                    {"step_time_ns", SpreadJson(SpreadOf(step_ns))},
                    {"exposed_comm_ns", SpreadJson(SpreadOf(exposed))}};
  // Real runs: the longest wait for a core, and the iterations it made the CPU's.
  if (const double worst = WorstCpuWaitFraction(ranks); worst > 0) {
    doc["summary"]["cpu_wait_max_fraction"] = worst;
    if (auto bound = CpuBoundJson(CpuBoundIterations(ranks)); !bound.is_null()) {
      doc["cpu_bound"] = std::move(bound);
    }
  }
  doc["iterations"] = std::move(iter_list);
  doc["ranks"] = std::move(rank_list);
  doc["collective_types"] = std::move(type_list);
  return doc;
}

bool ResultsOrder(const record::OpEvent& a, const record::OpEvent& b) {
  return std::tie(a.iteration, a.rank, a.node, a.start) <
         std::tie(b.iteration, b.rank, b.node, b.start);
}

json CollectiveEntry(const record::OpEvent& e) {
  json j = record::ToJson(e);
  j["duration_ns"] = e.duration();
  j["algbw_gbps"] = AlgBw(e);
  j["busbw_gbps"] = BusBw(e);
  return j;
}

json BuildResultsJson(const json& run_info, const std::vector<record::OpEvent>& ops,
                      const std::vector<record::RankSummary>& ranks, const json& clock_offsets_ns) {
  json doc = ResultsJsonWithoutCollectives(
      run_info, CollectiveTypeTable(ops),
      CheckCompleteness(run_info, ops, ranks, /*truncated=*/false), ranks, clock_offsets_ns);
  std::vector<const record::OpEvent*> comm;
  for (const auto& e : ops) {
    if (e.is_comm()) comm.push_back(&e);
  }
  std::sort(comm.begin(), comm.end(),
            [](const auto* a, const auto* b) { return ResultsOrder(*a, *b); });
  json coll_list = json::array();
  for (const auto* e : comm) coll_list.push_back(CollectiveEntry(*e));
  doc["collectives"] = std::move(coll_list);
  return doc;
}

Status WriteJsonFile(const std::string& path, const json& doc) {
  return WriteFileAtomically(path, doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n");
}

Status WriteResultsJson(const std::string& path, const json& run_info,
                        const std::vector<record::OpEvent>& ops,
                        const std::vector<record::RankSummary>& ranks) {
  return WriteJsonFile(path, BuildResultsJson(run_info, ops, ranks));
}

}  // namespace genie::report
