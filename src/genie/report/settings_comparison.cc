#include "genie/report/settings_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "genie/common/units.h"
#include "genie/report/network_settings.h"
#include "genie/report/prediction.h"
#include "genie/report/statistics.h"

namespace genie::report {

using json = nlohmann::json;

json SettingsEntry(const json& results, const std::string& name) {
  json e = {
      {"name", name},           {"settings", SummaryOf(results.value("network_settings", json()))},
      {"measured_step_ns", 0},  {"predicted_step_ns", 0},
      {"ratio", 0.0},           {"prediction_source", ""},
      {"notes", json::array()}, {"calibration_settings", json::object()}};
  if (!results.contains("prediction")) {
    // Without a prediction the measured median is the summary's.
    const json s = results.value("summary", json::object());
    if (s.is_object() && s.contains("step_time_ns") && s["step_time_ns"].is_object()) {
      e["measured_step_ns"] = s["step_time_ns"].value("median", 0);
    }
    return e;
  }
  const Comparison c = ComparisonFromJson(results["prediction"]);
  std::vector<TimeNs> measured, expected;
  for (const auto& it : c.iterations) {
    measured.push_back(it.measured_ns);
    expected.push_back(it.expected_ns);
  }
  const TimeNs m = SpreadOf(measured).median, p = SpreadOf(expected).median;
  e["measured_step_ns"] = m;
  e["predicted_step_ns"] = p;
  e["ratio"] = p > 0 ? static_cast<double>(m) / static_cast<double>(p) : 0.0;
  e["prediction_source"] = c.source;
  e["notes"] = c.notes;
  e["calibration_settings"] = c.calibration_settings;
  return e;
}

json SettingsComparison(const std::vector<json>& entries) {
  std::vector<SettingsSummary> summaries;
  std::set<std::string> names;
  for (const auto& e : entries) {
    SettingsSummary s;
    const json settings = e.value("settings", json::object());
    for (const auto& [k, v] : settings.items()) {
      if (v.is_string()) s[k] = v.get<std::string>();
    }
    if (s.empty()) return json();  // a run without them cannot be compared by them
    for (const auto& [k, v] : s) names.insert(k);
    summaries.push_back(std::move(s));
  }
  if (summaries.size() < 2) return json();
  json differ = json::array(), same = json::array();
  for (const auto& name : names) {
    json values = json::array(), calibrated = json::array();
    for (const auto& s : summaries) {
      auto it = s.find(name);
      values.push_back(it == s.end() ? "" : it->second);
    }
    for (const auto& e : entries) {  // the setting its prediction's calibration was measured under
      const json c = e.value("calibration_settings", json::object());
      calibrated.push_back(c.is_object() ? c.value(name, std::string()) : std::string());
    }
    const bool all_equal =
        std::all_of(values.begin(), values.end(), [&](const json& v) { return v == values[0]; });
    if (all_equal) {
      same.push_back({{"name", name}, {"value", values[0]}});
    } else {
      differ.push_back({{"name", name}, {"values", values}, {"calibrated", calibrated}});
    }
  }
  if (differ.empty()) return json();
  return {{"runs", entries}, {"differ", differ}, {"same", same}};
}

std::string FormatSettingsComparison(const json& comparison) {
  if (!comparison.is_object()) return "";
  const json& runs = comparison["runs"];
  std::string out = "# the runs differ in their network settings\n";
  out += fmt::format("#   {:<15}", "setting");
  for (const auto& r : runs) out += fmt::format("  {:<32}", r.value("name", ""));
  out += "\n";
  for (const auto& d : comparison["differ"]) {
    out += fmt::format("#   {:<15}", d.value("name", ""));
    for (const auto& v : d["values"]) {
      const std::string s = v.get<std::string>();
      out += fmt::format("  {:<32}", s.empty() ? "not recorded" : s);
    }
    out += fmt::format("\n#   {:<15}", "  calibrated");
    for (const auto& v : d["calibrated"]) {
      const std::string s = v.get<std::string>();
      out += fmt::format("  {:<32}", s.empty() ? "-" : s);
    }
    out += "\n";
  }
  auto row = [&](const char* label, auto&& cell) {
    out += fmt::format("#   {:<15}", label);
    for (const auto& r : runs) out += fmt::format("  {:<32}", cell(r));
    out += "\n";
  };
  row("measured step",
      [](const json& r) { return FormatDuration(r.value("measured_step_ns", TimeNs{0})); });
  row("predicted step", [](const json& r) {
    const TimeNs p = r.value("predicted_step_ns", TimeNs{0});
    return p > 0 ? FormatDuration(p) : std::string("no prediction");
  });
  row("meas/pred", [](const json& r) {
    const double x = r.value("ratio", 0.0);
    return x > 0 ? fmt::format("{:.2f}", x) : std::string("-");
  });
  for (const auto& r : runs) {
    for (const auto& n : r.value("notes", json::array())) {
      out += fmt::format("#   note ({}): {}\n", r.value("name", ""), n.get<std::string>());
    }
  }
  return out;
}

}  // namespace genie::report
