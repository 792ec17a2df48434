// The report page's model: what data `genie report` puts on the page, as one JSON object the
// page's script draws (html_page.h renders it). Built only from files genie already writes — a
// run's results.json, `genie bench --json`, `genie doctor --json` — nothing is re-run. One
// "panel" per input file; several panels sit side by side on the page.
//
//   run panel:    provenance rows; per iteration the measured step (ms) and busbw per
//                 collective type (GB/s, time-weighted as the summary's table), beside each
//                 expectation (--predict / --baseline) with its flagged iterations; fault events
//                 placed on iterations; the per-type table; busbw per (type, size); the
//                 localisation's heat map; testbed counters and traffic; the Chrome trace.
//   bench panel:  the sweep's rows (busbw vs size), footer, verdict.
//   doctor panel: the heat map of measured ÷ expected per direction, per-host figures, findings.
//
// Numbers are kept as measured (ns, GB/s); the page formats them (busbw to three significant
// digits, as the terminal summary). Pure apart from LoadPanel's file read; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::report::html {

// What a JSON document is, from its content.
enum class InputKind { kRun, kBench, kDoctor };
Result<InputKind> DetectInputKind(const nlohmann::json& doc, const std::string& name);

// `name` labels the panel (usually the file's path); `trace` is the run's Chrome trace, if known
// ("" = none), linked with instructions for Perfetto.
Result<nlohmann::json> RunPanel(const nlohmann::json& results, const std::string& name,
                                const std::string& trace = "");
nlohmann::json BenchPanel(const nlohmann::json& bench, const std::string& name);
nlohmann::json DoctorPanel(const nlohmann::json& doctor, const std::string& name);

// Any of the three, by its content.
Result<nlohmann::json> PanelFromDocument(const nlohmann::json& doc, const std::string& name,
                                         const std::string& trace = "");
// Reads `path` (a results.json, a bench or doctor JSON). A run's trace is `trace` when given,
// else `X.trace.json` beside `X.json` or `trace.json` in its folder when one exists.
Result<nlohmann::json> LoadPanel(const std::string& path, const std::string& trace = "");

// A doctor scan's (or a run localisation's) JSON as a heat map: hosts, per direction
// [from][to] the goodput's ratio to what was expected (the fabric's expected goodput when known,
// else the median pair), to three significant digits; per-host figures and findings. Null
// entries were not measured.
// Above kDenseHeatMapHosts hosts the map is "rows_hex" instead of the "ratio" matrix: per row a
// string of two hex digits per cell, HeatMapCode(ratio), "ff" where not measured.
inline constexpr size_t kDenseHeatMapHosts = 48;
// The ratio in hundredths, 0..254 (254: 2.54 and above).
int HeatMapCode(double ratio);
nlohmann::json HeatMap(const nlohmann::json& doctor);

// {"generator": "genie report", "genie_version": ..., "title": ..., "panels": [...]}.
nlohmann::json PageModel(std::vector<nlohmann::json> panels, const std::string& title = "");

}  // namespace genie::report::html
