// Two runs that differ in their congestion control: the settings that differ, each run's step
// beside its prediction, and the notes its prediction carried.
#include "genie/report/settings_comparison.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

using json = nlohmann::json;

json Results(const std::string& cc, std::vector<std::pair<long, long>> measured_expected,
             std::vector<std::string> notes = {}) {
  json iterations = json::array();
  int i = 0;
  for (const auto& [m, e] : measured_expected) {
    iterations.push_back({{"iteration", i++},
                          {"measured_step_ns", m},
                          {"expected_step_ns", e},
                          {"ratio", static_cast<double>(m) / static_cast<double>(e)},
                          {"slow", false},
                          {"ops", json::array()}});
  }
  json prediction = {{"source", "flow model on testbed t"},
                     {"threshold", 0.25},
                     {"iterations", iterations},
                     {"calibration_settings", {{"tcp_congestion", "bbr"}, {"tcp_ecn", "2"}}}};
  if (!notes.empty()) prediction["notes"] = notes;
  return {{"network_settings",
           {{"summary",
             {{"tcp_congestion", cc},
              {"tcp_ecn", "2"},
              {"host_links", "tbf, 1gbit, queue 2000000 B"}}}}},
          {"prediction", prediction}};
}

TEST(SettingsComparison, TwoRunsDifferingInCongestionControlSideBySide) {
  const json bbr = SettingsEntry(Results("bbr", {{100, 100}, {110, 100}, {105, 100}}), "bbr.json");
  const json cubic =
      SettingsEntry(Results("cubic", {{130, 100}, {120, 100}, {125, 100}},
                            {"calibrated with tcp_congestion bbr, run with cubic: ..."}),
                    "cubic.json");
  EXPECT_EQ(bbr.value("measured_step_ns", 0), 105);
  EXPECT_EQ(bbr.value("predicted_step_ns", 0), 100);
  EXPECT_DOUBLE_EQ(cubic.value("ratio", 0.0), 1.25);
  const json c = SettingsComparison({bbr, cubic});
  ASSERT_TRUE(c.is_object());
  ASSERT_EQ(c["differ"].size(), 1u);
  EXPECT_EQ(c["differ"][0]["name"], "tcp_congestion");
  EXPECT_EQ(c["differ"][0]["values"], json::array({"bbr", "cubic"}));
  EXPECT_EQ(c["differ"][0]["calibrated"], json::array({"bbr", "bbr"}));
  EXPECT_EQ(c["same"].size(), 2u);
  const std::string text = FormatSettingsComparison(c);
  EXPECT_NE(text.find("tcp_congestion   bbr"), std::string::npos) << text;
  EXPECT_NE(text.find("1.25"), std::string::npos) << text;
  EXPECT_NE(text.find("note (cubic.json): calibrated with tcp_congestion bbr, run with cubic"),
            std::string::npos)
      << text;
}

TEST(SettingsComparison, NothingWhenTheSettingsAgreeOrWereNotRecorded) {
  const json a = SettingsEntry(Results("bbr", {{100, 100}}), "a");
  const json b = SettingsEntry(Results("bbr", {{120, 100}}), "b");
  EXPECT_TRUE(SettingsComparison({a, b}).is_null());
  EXPECT_TRUE(SettingsComparison({a}).is_null());
  const json old = SettingsEntry(json{{"summary", {{"step_time_ns", {{"median", 7}}}}}}, "old");
  EXPECT_EQ(old.value("measured_step_ns", 0), 7);
  EXPECT_TRUE(SettingsComparison({a, old}).is_null());
}

}  // namespace
}  // namespace genie::report
