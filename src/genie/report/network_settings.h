// Network settings: what a run's network was set to beyond what the flow model describes — per
// host the TCP congestion control in effect and ECN (record/host_settings.h, in each rank's
// stream header), and on a genie testbed each link end's qdisc, rate and queue limit as tc
// reported them when the run began (testbed/link_qdisc.h, in the testbed record). results.json
// keeps them as `network_settings` with a summary, one value per setting name ("tcp_congestion":
// "bbr", "host_nics" (each host's own egress), "host_links" (the switch ports toward hosts),
// "switch_links": "tbf, 1gbit, queue 2000000 B"), by which two runs — or a run and the
// calibration its prediction used — are compared: the prediction says when its calibration was
// measured under other settings, and the report puts runs that differ side by side
// (docs/results.md). Pure; any thread.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace genie::report {

// Setting name -> value; a setting absent was not recorded.
using SettingsSummary = std::map<std::string, std::string>;

// {"hosts": [...], "links": [...], "summary": {...}} from per-host entries ({"host", "ranks",
// "tcp_congestion", "tcp_congestion_source", "tcp_congestion_default", "tcp_ecn"}) and per
// link end entries ({"link", "node", "ifname", "qdisc", "rate_bps", "burst_bytes",
// "limit_bytes", "queues"}); either may be empty.
nlohmann::json NetworkSettingsOf(nlohmann::json hosts, nlohmann::json links);

// From a run's provenance (a results.json's, or merged streams' run_info): each rank's header
// "host_settings" (older runs: its sysctls and transport.tcp_congestion), gathered per host, and
// the testbed record's "links". Null when none of it was recorded (a simulation).
nlohmann::json NetworkSettingsFromProvenance(const nlohmann::json& provenance);

// The summary of a network_settings object (empty when it has none).
SettingsSummary SummaryOf(const nlohmann::json& network_settings);

struct SettingDifference {
  std::string name;
  std::string a, b;  // "" = not recorded on that side
};
// Every setting whose values differ (one side missing included), by name.
std::vector<SettingDifference> SettingDifferences(const SettingsSummary& a,
                                                  const SettingsSummary& b);
// "calibrated with tcp_congestion bbr, run with cubic; ..." — `a_label`/`b_label` say what
// each side is ("calibrated with", "run with").
std::string DescribeDifferences(const std::vector<SettingDifference>& differences,
                                const std::string& a_label, const std::string& b_label);

// What a prediction says about the calibration it used (testbed/calibration.h keeps one per
// settings): "" when it was measured under the run's settings (`matched`); otherwise which
// settings differ — "calibrated with tcp_congestion bbr, run with cubic: ..." — and the
// command that calibrates under the run's, or that the calibration predates recorded settings.
// `kept`: calibrations the testbed keeps.
std::string CalibrationNote(const std::string& testbed, const SettingsSummary& calibrated,
                            const SettingsSummary& run, const std::string& measured, bool matched,
                            int kept);

// The lines `genie results show` and a run's summary print: the summary, then each host whose
// congestion control came from genie's socket option.
std::string FormatNetworkSettings(const nlohmann::json& network_settings);

}  // namespace genie::report
