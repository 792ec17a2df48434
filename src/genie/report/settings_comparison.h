// Settings side by side: "what bbr vs cubic does to this step". Given several runs' results,
// the network settings (network_settings.h) on which they differ, each run's value of each,
// and each run's measured step beside its prediction (median over its measured iterations),
// with the prediction's notes (e.g. a calibration measured under other settings). `genie report
// A B` puts it above the runs' panels. Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace genie::report {

// One run's part, from its results.json (`name` labels it): {"name", "settings": summary,
// "measured_step_ns", "predicted_step_ns" (0: no prediction), "ratio", "prediction_source",
// "notes", "calibration_settings"}.
nlohmann::json SettingsEntry(const nlohmann::json& results, const std::string& name);

// The view over the entries: {"runs": [entries], "differ": [{"name", "values": [one per run,
// "" = not recorded], "calibrated": [the value its prediction's calibration was measured
// under, "" = none known]}], "same": [{"name", "value"}]}. Null unless at least two runs recorded
// their settings and they differ in at least one.
nlohmann::json SettingsComparison(const std::vector<nlohmann::json>& entries);

// The same as text (`genie results show A B` could print it; the report draws the JSON).
std::string FormatSettingsComparison(const nlohmann::json& comparison);

}  // namespace genie::report
