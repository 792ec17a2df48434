#include "genie/report/html/page_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "genie/common/input_file.h"
#include "genie/record/json_check.h"
#include "genie/report/attribution.h"
#include "genie/report/prediction.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/settings_comparison.h"
#include "genie/report/statistics.h"
#include "genie/report/summary.h"
#include "genie/report/testbed_counters.h"

namespace genie::report::html {

namespace {

using nlohmann::json;

// A value for a provenance row: strings as they are, lists of strings joined, anything else as
// compact JSON (long configs cut, the results file has them whole).
std::string RowText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array() &&
      std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : " ") + e.get<std::string>();
    return s;
  }
  std::string s = v.dump();
  if (s.size() > 400) s = s.substr(0, 397) + "...";
  return s;
}

// The provenance of a run: the results' own, or (merged from streams) the first stream header's.
json RunInfo(const json& provenance) {
  if (provenance.is_object() && provenance.contains("headers") &&
      provenance["headers"].is_array() && !provenance["headers"].empty()) {
    const json& h = provenance["headers"][0];
    if (h.is_object() && h.contains("run") && h["run"].is_object()) return h["run"];
    return h;
  }
  return provenance;
}

json ProvenanceRows(const json& provenance, int ranks) {
  json rows = json::array();
  auto add = [&](const std::string& key, const json& v) {
    if (v.is_null()) return;
    std::string text = RowText(v);
    if (!text.empty()) rows.push_back({key, text});
  };
  const json info = RunInfo(provenance);
  if (!info.is_object()) return rows;
  auto get = [&](const char* key) { return info.contains(key) ? info[key] : json(); };
  add("genie version", get("genie_version"));
  add("command", get("command_line"));
  if (info.contains("configs") && info["configs"].is_object()) {
    for (const auto& [k, v] : info["configs"].items()) add("config: " + k, v);
  }
  add("ranks", ranks > 0 ? json(ranks) : get("world_size"));
  std::set<std::string> hosts;
  if (provenance.is_object() && provenance.contains("headers") &&
      provenance["headers"].is_array()) {
    for (const auto& h : provenance["headers"]) {
      const json& r = h.is_object() && h.contains("run") ? h["run"] : h;
      if (r.is_object() && r.contains("hostname") && r["hostname"].is_string()) {
        hosts.insert(r["hostname"].get<std::string>());
      }
    }
  }
  if (!hosts.empty()) {
    std::string names;
    for (const auto& h : hosts) names += (names.empty() ? "" : ", ") + h;
    add("hosts", std::to_string(hosts.size()) + " (" + names + ")");
  } else {
    add("host", get("hostname"));
  }
  add("transport", get("transport"));
  if (provenance.is_object() && provenance.contains("testbed") &&
      provenance["testbed"].is_object()) {
    const json& t = provenance["testbed"];
    add("testbed", t.value("name", "?") + " (" + t.value("topology", "?") + ", " +
                       FormatBitRate(record::UintField(t, "rate_bps", 0)) + ")");
  }
  if (info.contains("kernel") && info["kernel"].is_object()) {
    add("kernel", info["kernel"].value("sysname", "") + " " + info["kernel"].value("release", ""));
  }
  add("time (UTC)", get("time"));
  if (provenance.is_object() && provenance.contains("merged_files")) {
    add("merged from", provenance["merged_files"]);
  }
  return rows;
}

json TypeRowJson(const TypeRow& r) {
  return {{"type", r.type},
          {"count", r.count},
          {"mean_size", r.count > 0 ? r.bytes / static_cast<Bytes>(r.count) : 0},
          {"mean_time_us", r.mean_ns / 1000.0},
          {"algbw_gbps", r.algbw_gbps},
          {"busbw_gbps", r.busbw_gbps}};
}

// The comparison's per-iteration figures as the chart draws them.
json ExpectationJson(const Comparison& c) {
  json e = {{"source", c.source},
            {"threshold", c.threshold},
            {"flagged", c.flagged},
            {"iterations", json::array()}};
  json flagged = json::array();
  json timeouts = json::array();
  json probes = json::array();
  for (const auto& it : c.iterations) {
    json busbw = json::object();
    for (const auto& op : it.ops) busbw[op.type] = op.expected_busbw_gbps;
    json slow_ops = json::array();
    for (const auto& op : it.ops) {
      if (op.slow) slow_ops.push_back(op.type);
    }
    e["iterations"].push_back({{"iteration", it.iteration},
                               {"expected_step_ns", it.expected_ns},
                               {"ratio", it.ratio},
                               {"slow", it.slow},
                               {"slow_ops", slow_ops},
                               {"expected_busbw_gbps", busbw}});
    if (it.slow) flagged.push_back(it.iteration);
    if (it.tcp_timeouts > 0) {
      timeouts.push_back({{"iteration", it.iteration}, {"tcp_timeouts", it.tcp_timeouts}});
    }
    if (it.probe_rtt_episodes > 0) {
      probes.push_back({{"iteration", it.iteration},
                        {"probe_rtt_episodes", it.probe_rtt_episodes},
                        {"probe_rtt_ns", it.probe_rtt_ns}});
    }
  }
  e["flagged_iterations"] = flagged;
  // Iterations whose hosts waited out retransmission timeouts: stalls the model cannot predict.
  e["timeouts"] = timeouts;
  // Iterations in which busy connections held bbr's PROBE_RTT: the transport's own pause,
  // placed in the prediction where it was.
  e["probe_rtt"] = probes;
  std::vector<std::vector<OpBehind>> behind;
  for (const auto& it : c.iterations) behind.push_back(it.behind);
  json ops = json::array();
  for (const auto& op : FurthestBehind(behind, kOpsBehindPrinted)) ops.push_back(ToJson(op));
  e["ops_behind"] = ops;
  // What the expectation was made with and may not hold for (the calibration's settings, its
  // hosts, the machine's cores), as --predict printed them.
  e["notes"] = c.notes;
  return e;
}

// Each fault event placed on the iteration it hit: the first whose finish is after it.
json FaultsJson(const json& testbed, const std::vector<IterationStep>& steps, TimeNs origin) {
  json out = json::array();
  if (!testbed.is_object() || !testbed.contains("faults") || !testbed["faults"].is_array()) {
    return out;
  }
  for (const auto& f : testbed["faults"]) {
    if (!f.is_object()) continue;
    const TimeNs at = record::IntField(f, "at_ns", 0);
    json e = {{"action", f.value("action", "?")},
              {"fault", f.value("fault", "?")},
              {"t_s", static_cast<double>(at - origin) / 1e9}};
    int hit = -1;
    for (const auto& s : steps) {
      if (s.finish > at) {
        hit = s.iteration;
        break;
      }
    }
    e["iteration"] = hit >= 0 ? json(hit) : json();
    if (f.contains("error")) e["error"] = f["error"];
    if (e["action"] == "not applied") {  // never took effect: no place on the chart
      e["iteration"] = json();
      e["reason"] = f.value("reason", "no reason recorded");
    }
    out.push_back(e);
  }
  return out;
}

// Compute faults (provenance.compute_faults, every rank's events) as fault events: one per
// fault, action and iteration, at its earliest rank's time, on the iteration it names.
json ComputeFaultsJson(const json& events, TimeNs origin) {
  json out = json::array();
  if (!events.is_array()) return out;
  std::map<std::tuple<int64_t, int64_t, std::string>, json> grouped;
  for (const auto& f : events) {
    if (!f.is_object()) continue;
    const int64_t iteration = record::IntField(f, "iteration", 0);
    const TimeNs at = record::IntField(f, "at_ns", 0);
    json& e = grouped[{iteration, record::IntField(f, "entry", 0), f.value("action", "?")}];
    if (e.is_null()) {
      e = {{"action", f.value("action", "?")},
           {"fault", "compute: " + f.value("fault", "?")},
           {"t_s", static_cast<double>(at - origin) / 1e9},
           {"iteration", iteration >= 1 ? json(iteration - 1) : json()},  // results count from 0
           {"ranks", json::array()}};
      if (f.contains("reason")) e["reason"] = f["reason"];
    }
    e["t_s"] = std::min(e["t_s"].get<double>(), static_cast<double>(at - origin) / 1e9);
    e["ranks"].push_back(record::IntField(f, "rank", 0));
  }
  for (auto& [key, e] : grouped) out.push_back(std::move(e));
  return out;
}

json CountersJson(const json& provenance) {
  json c = {{"hosts", json::array()}};
  if (provenance.is_object() && provenance.contains("testbed")) {
    for (const auto& [host, r] : TestbedHostCounters(provenance["testbed"])) {
      c["hosts"].push_back({{"host", host},
                            {"tx_bytes", r.tx_bytes},
                            {"rx_bytes", r.rx_bytes},
                            {"drops", r.drops},
                            {"tcp_out_segs", r.out_segs},
                            {"tcp_retrans_segs", r.retrans},
                            {"tcp_timeouts", r.timeouts}});
    }
  }
  if (provenance.is_object() && provenance.contains("traffic") &&
      provenance["traffic"].is_array()) {
    uint64_t network = 0, modelled = 0;
    for (const auto& rank : provenance["traffic"]) {
      if (!rank.is_object() || !rank.contains("peers") || !rank["peers"].is_array()) continue;
      for (const auto& p : rank["peers"]) {
        network += record::UintField(p, "network_bytes_sent", 0);
        modelled += record::UintField(p, "modelled_bytes_sent", 0);
      }
    }
    c["traffic"] = {{"network_bytes", network},
                    {"modelled_bytes", modelled},
                    {"ranks", provenance["traffic"].size()}};
  }
  return c;
}

double Num(const json& v) { return v.is_number() ? v.get<double>() : 0.0; }

// `x` rounded to three significant digits (what the page shows of it).
double Sig3(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(x))));
  return std::round(x * scale) / scale;
}

}  // namespace

int HeatMapCode(double ratio) {
  if (!(ratio > 0)) return 0;
  return static_cast<int>(std::min(254.0, std::round(ratio * 100)));
}

Result<InputKind> DetectInputKind(const json& doc, const std::string& name) {
  if (doc.is_object()) {
    if (doc.value("format", "") == kResultsFormat) return InputKind::kRun;
    if (doc.contains("info") && doc.contains("rows") && doc["rows"].is_array()) {
      return InputKind::kBench;
    }
    if (doc.contains("pairwise") && doc.contains("hosts")) return InputKind::kDoctor;
  }
  return Status::InvalidArgument(
      name +
      ": not a genie results.json, `genie bench --json` or `genie doctor --json` file; "
      "pass one of those (genie report reads what genie wrote, it does not re-run)");
}

json HeatMap(const json& d) {
  json h = {{"hosts", d.contains("hosts") ? d["hosts"] : json::array()}};
  const double expected = Num(d.value("expected_gbps", json(0)));
  const double reference = Num(d.value("reference_gbps", json(0)));
  const double yardstick = expected > 0 ? expected : reference;
  h["expected_gbps"] = yardstick;
  h["expected_source"] = expected > 0 ? d.value("expected_source", std::string("expected"))
                                      : std::string("median pair (no expected rate given)");
  // Only the ratio goes on the page, to the three digits it shows (the cell's GB/s is ratio x
  // expected). Up to kDenseHeatMapHosts hosts as a matrix (the page draws a table); beyond, each
  // row as a string of two hex digits per cell (a canvas of colours): a 512-host scan is
  // 262,144 cells, 0.5 MB so instead of 4 MB as numbers.
  const bool dense = h["hosts"].size() <= kDenseHeatMapHosts;
  json rows = json::array();
  if (d.contains("pairwise") && d["pairwise"].contains("gbps") &&
      d["pairwise"]["gbps"].is_array()) {
    for (const auto& row : d["pairwise"]["gbps"]) {
      json r = json::array();
      std::string hex;
      if (row.is_array()) {
        for (const auto& x : row) {
          const bool measured = x.is_number() && yardstick > 0;
          const double ratio = measured ? x.get<double>() / yardstick : 0;
          if (dense) {
            r.push_back(measured ? json(Sig3(ratio)) : json());
          } else {
            hex += measured ? fmt::format("{:02x}", HeatMapCode(ratio)) : std::string("ff");
          }
        }
      }
      rows.push_back(dense ? r : json(hex));
    }
  }
  h[dense ? "ratio" : "rows_hex"] = rows;
  h["per_host"] = d.contains("per_host") ? d["per_host"] : json::array();
  h["findings"] = d.contains("findings") ? d["findings"] : json::array();
  h["healthy"] = d.value("healthy", h["findings"].empty());
  return h;
}

namespace {

// Per attributed iteration the stacked bar's parts of the excess (ns) and the causes named
// (report/attribution.h); empty when nothing was attributed.
json AttributionBars(const json& attribution) {
  json out = json::array();
  for (const IterationAttribution& a : AttributionFromJson(attribution)) {
    json causes = json::array();
    for (const CauseShare& c : a.causes) {
      causes.push_back({{"cause", CauseName(c.cause)},
                        {"share_ns", c.share_ns},
                        {"culprit", c.culprit},
                        {"evidence", c.evidence}});
    }
    out.push_back({{"iteration", a.iteration},
                   {"measured_ns", a.measured_ns},
                   {"expected_ns", a.expected_ns},
                   {"excess_ns", a.excess_ns},
                   {"compute_ns", a.compute_ns},
                   {"network_ns", a.network_ns},
                   {"contention_ns", a.contention_ns},
                   {"rest_ns", a.rest_ns},
                   {"causes", causes}});
  }
  return out;
}

}  // namespace

Result<json> RunPanel(const json& results, const std::string& name, const std::string& trace) {
  GENIE_ASSIGN_OR_RETURN(RunRecords rec, ParseResults(results.dump(), name));
  const json provenance = results.contains("provenance") ? results["provenance"] : json::object();
  std::vector<IterationStep> steps;
  for (const auto& s : StepTimes(rec.ranks)) {
    if (s.iteration >= 0) steps.push_back(s);
  }
  std::map<int, std::vector<record::OpEvent>> by_iteration;
  std::map<std::pair<std::string, Bytes>, std::vector<record::OpEvent>> by_size;
  for (const auto& op : rec.ops) {
    if (op.iteration < 0 || !op.is_comm()) continue;
    by_iteration[op.iteration].push_back(op);
    by_size[{CommTypeName(op), op.size}].push_back(op);
  }
  json p = {{"kind", "run"}, {"name", name}};
  const std::vector<RankTotals> totals = TotalsPerRank(rec.ranks);
  p["provenance"] = ProvenanceRows(provenance, static_cast<int>(totals.size()));

  // The summary's figures, under the names the terminal uses (per iteration / total).
  std::vector<TimeNs> step_ns, exposed, compute;
  for (const auto& s : steps) step_ns.push_back(s.step_ns());
  for (const auto& t : totals) {
    exposed.push_back(t.exposed_comm_ns);
    compute.push_back(t.compute_ns);
  }
  auto spread = [](std::vector<TimeNs> v) {
    Spread s = SpreadOf(std::move(v));
    return json{{"min", s.min}, {"median", s.median}, {"max", s.max}};
  };
  p["summary"] = {{"ranks", totals.size()},
                  {"iterations", steps.size()},
                  {"step_time_ns", spread(step_ns)},
                  {"exposed_comm_total_ns", spread(exposed)},
                  {"compute_total_ns", spread(compute)}};

  json iterations = json::array();
  for (const auto& s : steps) {
    json busbw = json::object();
    for (const TypeRow& r : CollectiveTypeTable(by_iteration[s.iteration])) {
      busbw[r.type] = r.busbw_gbps;
    }
    iterations.push_back({{"iteration", s.iteration},
                          {"start_ns", s.start},
                          {"step_ns", s.step_ns()},
                          {"busbw_gbps", busbw}});
  }
  p["iterations"] = iterations;

  json types = json::array();
  std::string main_type;
  TimeNs main_ns = -1;
  for (const TypeRow& r : CollectiveTypeTable(rec.ops)) {
    types.push_back(TypeRowJson(r));
    if (r.total_ns > main_ns) {
      main_ns = r.total_ns;
      main_type = r.type;
    }
  }
  p["types"] = types;
  p["main_type"] = main_type;  // the type the busbw chart leads with: most time spent
  json sizes = json::array();
  for (const auto& [key, ops] : by_size) {
    for (const TypeRow& r : CollectiveTypeTable(ops)) {
      json row = TypeRowJson(r);
      row["size"] = key.second;
      sizes.push_back(row);
    }
  }
  p["sizes"] = sizes;

  json expectations = json::array();
  for (const char* key : {"prediction", "baseline"}) {
    if (!results.contains(key)) continue;
    json e = ExpectationJson(ComparisonFromJson(results[key]));
    e["kind"] = key;
    expectations.push_back(e);
  }
  p["expectations"] = expectations;
  p["faults"] = FaultsJson(provenance.value("testbed", json()), steps, FirstStart(rec.ops));
  TimeNs origin = FirstStart(rec.ops);  // compute faults: from the first iteration's start
  for (const auto& r : rec.ranks) origin = std::min(origin, r.start);
  for (auto& e : ComputeFaultsJson(provenance.value("compute_faults", json()), origin)) {
    p["faults"].push_back(std::move(e));
  }
  p["counters"] = CountersJson(provenance);
  p["attribution"] = AttributionBars(results.value("attribution", json()));
  // Iterations whose time was genie's own machine's (a rank waited for a core): said apart.
  p["cpu_bound"] = results.value("cpu_bound", json());
  if (results.contains("localization") && results["localization"].is_object()) {
    p["heatmap"] = HeatMap(results["localization"]);
  }
  if (results.contains("completeness") && results["completeness"].is_object()) {
    p["complete"] = results["completeness"].value("complete", true);
  }
  p["trace"] = trace.empty() ? json() : json(trace);
  // Its network settings and step beside the prediction, for the side-by-side view (PageModel).
  p["settings_entry"] = SettingsEntry(results, name);
  return p;
}

json BenchPanel(const json& bench, const std::string& name) {
  json p = {{"kind", "bench"}, {"name", name}};
  json rows = json::array();
  const json& info = bench["info"];
  if (info.is_object()) {
    for (const auto& [k, v] : info.items()) rows.push_back({k, RowText(v)});
  }
  p["provenance"] = rows;
  p["info"] = info;
  p["rows"] = bench["rows"];
  p["avg_busbw_gbps"] = bench.value("avg_busbw_gbps", json(0.0));
  p["wrong"] = bench.value("wrong", json(-1));
  p["verdict"] = bench.value("verdict", json());
  return p;
}

json DoctorPanel(const json& doctor, const std::string& name) {
  json p = {{"kind", "doctor"}, {"name", name}};
  json rows = json::array();
  if (doctor.value("loopback", false)) {  // --allow-shared-host: no figure is of a fabric
    p["name"] = name + " (LOOPBACK: the ranks shared a host)";
    rows.push_back({"figures", "every one of this machine's CPUs and loopback, not a fabric; "
                               "no verdict"});
  }
  rows.push_back({"hosts", std::to_string(doctor.value("hosts", json::array()).size())});
  rows.push_back({"scan time (s)", RowText(doctor.value("seconds", json(0)))});
  rows.push_back({"bytes per direction", RowText(doctor.value("bytes_per_direction", json(0)))});
  if (!doctor.value("expected_source", std::string()).empty()) {
    rows.push_back({"expected", doctor.value("expected_source", std::string())});
  }
  p["provenance"] = rows;
  p["heatmap"] = HeatMap(doctor);
  p["incast_gbps"] = doctor.value("incast_gbps", json());
  p["incast_send_gbps"] = doctor.value("incast_send_gbps", json());
  p["incast_send_note"] = doctor.value("incast_send_note", json());
  p["reference_rtt_us"] = doctor.value("reference_rtt_us", json());
  return p;
}

Result<json> PanelFromDocument(const json& doc, const std::string& name, const std::string& trace) {
  GENIE_ASSIGN_OR_RETURN(InputKind kind, DetectInputKind(doc, name));
  switch (kind) {
    case InputKind::kRun:
      return RunPanel(doc, name, trace);
    case InputKind::kBench:
      return BenchPanel(doc, name);
    case InputKind::kDoctor:
      return DoctorPanel(doc, name);
  }
  return Status::Internal(name + ": unknown input kind");
}

Result<json> LoadPanel(const std::string& path, const std::string& trace) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, "report input"));
  std::ifstream in(path);
  if (!in) {
    return Status::IoError(path +
                           ": cannot open; pass a results.json, `genie bench --json` or "
                           "`genie doctor --json` file");
  }
  std::stringstream text;
  text << in.rdbuf();
  // Nesting bounded before anything recurses over the tree (as every genie reader does).
  if (record::JsonNestingDepth(text.str()) > record::kMaxJsonDepth) {
    return Status::InvalidArgument(path + ": nests more than " +
                                   std::to_string(record::kMaxJsonDepth) +
                                   " levels deep; not a genie results, bench or doctor file");
  }
  json doc = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status::InvalidArgument(path +
                                   ": not JSON; pass a results.json, `genie bench --json` "
                                   "or `genie doctor --json` file");
  }
  std::string found = trace;
  if (found.empty()) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    std::error_code ec;
    for (const fs::path& candidate :
         {fs::path(p).replace_extension(".trace.json"), p.parent_path() / "trace.json"}) {
      if (fs::is_regular_file(candidate, ec)) {
        found = candidate.string();
        break;
      }
    }
  }
  return PanelFromDocument(doc, path, found);
}

json PageModel(std::vector<json> panels, const std::string& title) {
  std::string t = title;
  if (t.empty()) {
    for (const auto& p : panels) t += (t.empty() ? "" : " | ") + p.value("name", std::string());
  }
  // Runs that differ in their network settings: the settings that differ and each run's step
  // beside its prediction, above the panels (settings_comparison.h).
  std::vector<json> entries;
  for (const auto& p : panels) {
    if (p.value("kind", std::string()) == "run" && p.contains("settings_entry")) {
      entries.push_back(p["settings_entry"]);
    }
  }
  json model = {{"generator", "genie report"},
                {"genie_version", GENIE_VERSION},
                {"title", t.empty() ? std::string("genie report") : t},
                {"panels", std::move(panels)}};
  if (json c = SettingsComparison(entries); !c.is_null()) model["settings_comparison"] = c;
  return model;
}

}  // namespace genie::report::html
