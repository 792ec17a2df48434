// The report page: the page model (page_model.h) rendered into one self-contained HTML
// document — the template (report_template.html, embedded at build time), Chart.js inlined
// (chart_js.h) and the model as JSON, escaped so that no file content can close a <script>.
// `genie report` and the --report flags of run, bench and doctor call WriteReport*. Any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::report::html {

// The template with `model` and `chart_js` filled in.
std::string RenderPage(const nlohmann::json& model, const std::string& chart_js);
// JSON text safe inside <script>: '<', '>' and '&' as \u escapes (valid JSON, same value).
std::string ScriptSafeJson(const nlohmann::json& j);

// The page of these panels, written atomically to `out` (the previous file or none if it fails).
Status WriteReportFromPanels(std::vector<nlohmann::json> panels, const std::string& out,
                             const std::string& title = "");
// The page of these files (results.json, bench or doctor JSON; page_model.h LoadPanel).
// `trace`: the Chrome trace of a single run ("" = look beside the file).
Status WriteReport(const std::vector<std::string>& paths, const std::string& out,
                   const std::string& trace = "", const std::string& title = "");

}  // namespace genie::report::html
