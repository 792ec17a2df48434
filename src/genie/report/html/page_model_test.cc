#include "genie/report/html/page_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "genie/report/attribution.h"
#include "genie/report/prediction.h"
#include "genie/report/results_json.h"
#include "genie/report/test_records.h"

namespace genie::report::html {
namespace {

using nlohmann::json;

// Two ranks, two iterations (test_records.h): each iteration's step is 80 µs, its all-reduce of
// 1 MiB over 2 ranks takes 50 µs (busbw = 1 MiB / 50 µs x 2(n-1)/n = 20.97152 GB/s).
json Results() {
  return BuildResultsJson(
      json{
          {"genie_version", "9.9"}, {"command_line", {"genie", "run", "w"}}, {"hostname", "node1"}},
      testing::RunOps(0), testing::RunRanks(0));
}

TEST(PageModel, RunPanelCarriesPerIterationStepAndBusBw) {
  auto p = RunPanel(Results(), "a/results.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)["kind"], "run");
  EXPECT_EQ((*p)["name"], "a/results.json");
  const json& its = (*p)["iterations"];
  ASSERT_EQ(its.size(), 2u);  // the warm-up is left out
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(its[i]["iteration"], i);
    EXPECT_EQ(its[i]["step_ns"], 80000);
    EXPECT_NEAR(its[i]["busbw_gbps"]["all_reduce"].get<double>(), 20.97152, 1e-9);
    EXPECT_NEAR(its[i]["busbw_gbps"]["recv"].get<double>(), 4096.0 / 59990.0,
                1e-12);  // the recv starts 10 ns in
  }
  EXPECT_EQ((*p)["summary"]["iterations"], 2);
  EXPECT_EQ((*p)["summary"]["ranks"], 2);
  EXPECT_EQ((*p)["summary"]["step_time_ns"]["median"], 80000);
  // The recv type spent most time (4 x 60 µs against 4 x 50 µs).
  EXPECT_EQ((*p)["main_type"], "recv");
  ASSERT_EQ((*p)["types"].size(), 2u);
  EXPECT_EQ((*p)["types"][0]["type"], "all_reduce");
  EXPECT_EQ((*p)["types"][0]["count"], 4);
  EXPECT_NEAR((*p)["types"][0]["busbw_gbps"].get<double>(), 20.97152, 1e-9);
  ASSERT_EQ((*p)["sizes"].size(), 2u);
  EXPECT_EQ((*p)["sizes"][0]["size"], 1048576);
  EXPECT_TRUE((*p)["expectations"].empty());
  EXPECT_TRUE((*p)["faults"].empty());
  EXPECT_FALSE(p->contains("heatmap"));
  EXPECT_TRUE((*p)["trace"].is_null());
  // Provenance rows, as label/value pairs.
  bool version = false, command = false;
  for (const auto& row : (*p)["provenance"]) {
    if (row[0] == "genie version") version = row[1] == "9.9";
    if (row[0] == "command") command = row[1] == "genie run w";
  }
  EXPECT_TRUE(version);
  EXPECT_TRUE(command);
}

TEST(PageModel, PredictionFlagsAndFaultsArePlacedOnIterations) {
  json results = Results();
  // Expected 40 µs per step: every iteration is 2x slower than expected.
  Expectation e;
  e.source = "flow model on testbed t";
  e.step_ns = 40000;
  TypeRow row;
  row.type = "all_reduce";
  row.busbw_gbps = 40.0;
  e.types = {row};
  Comparison c = Compare(testing::RunOps(0), testing::RunRanks(0), e, 0.25);
  OpBehind behind;  // iteration 1's op furthest behind its prediction
  behind.iteration = 1;
  behind.node = 5;
  behind.type = "all_reduce";
  behind.ranks = {0, 1};
  behind.measured_end_ns = 80000;
  behind.expected_end_ns = 40000;
  c.iterations.at(1).behind = {behind};
  c.iterations.at(1).tcp_timeouts = 3;  // its hosts waited out 3 retransmission timeouts
  c.iterations.at(1).probe_rtt_episodes = 7;  // and 7 connections held bbr's PROBE_RTT
  c.iterations.at(1).probe_rtt_ns = 1400 * kNsPerMs;
  c.notes = {"testbed t: its 8 hosts ... the cores, not the links, set the pace"};
  results["prediction"] = ToJson(c);
  // Faults on rank 0's clock: during iteration 0, between 0 and 1 (hits 1), after the run.
  results["provenance"]["testbed"] = {
      {"name", "t"},
      {"topology", "star:2"},
      {"rate_bps", 400000000},
      {"faults",
       {{{"fault", "h1 rate 40mbit"}, {"action", "apply"}, {"at_ns", 50000}},
        {{"fault", "h1 rate 40mbit"}, {"action", "clear"}, {"at_ns", 90000}},
        {{"fault", "late"}, {"action", "apply"}, {"at_ns", 900000}},
        {{"fault", "h1 down"}, {"action", "not applied"}, {"at_ns", 60000}, {"iteration", 9},
         {"reason", "iteration 9 was never reached"}}}},
      {"counters",
       {{"interfaces",
         {{{"node", "h0"}, {"link", "h0:s0"}, {"tx_bytes", 100}, {"rx_bytes", 200}},
          {{"node", "s0"}, {"link", "h0:s0"}, {"qdisc_drops", 7}}}},
        {"hosts",
         {{{"host", "h0"}, {"tcp_retrans_segs", 3}, {"tcp_out_segs", 1000}, {"tcp_timeouts", 2}}}}}}};
  // Compute faults of two ranks at measured iteration 2 (results' 1): one event, both ranks.
  results["provenance"]["compute_faults"] = {
      {{"fault", "every rank: compute 2x from iteration 2"}, {"entry", 1}, {"rank", 1},
       {"action", "apply"}, {"iteration", 2}, {"at_ns", 101000}},
      {{"fault", "every rank: compute 2x from iteration 2"}, {"entry", 1}, {"rank", 0},
       {"action", "apply"}, {"iteration", 2}, {"at_ns", 100000}}};
  auto p = RunPanel(results, "r.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ((*p)["expectations"].size(), 1u);
  const json& x = (*p)["expectations"][0];
  EXPECT_EQ(x["kind"], "prediction");
  EXPECT_EQ(x["source"], "flow model on testbed t");
  EXPECT_EQ(x["flagged_iterations"], json({0, 1}));
  EXPECT_EQ(x["iterations"][0]["expected_step_ns"], 40000);
  EXPECT_NEAR(x["iterations"][0]["ratio"].get<double>(), 2.0, 1e-9);
  EXPECT_NEAR(x["iterations"][1]["expected_busbw_gbps"]["all_reduce"].get<double>(), 40.0, 1e-9);
  EXPECT_EQ(x["timeouts"], json::parse(R"([{"iteration": 1, "tcp_timeouts": 3}])"));
  EXPECT_EQ(x["probe_rtt"], json::parse(R"([{"iteration": 1, "probe_rtt_episodes": 7,
                                             "probe_rtt_ns": 1400000000}])"));
  // What --predict said of its expectation, on the page too.
  EXPECT_EQ(x["notes"], json({"testbed t: its 8 hosts ... the cores, not the links, set the pace"}));
  ASSERT_EQ(x["ops_behind"].size(), 1u);
  EXPECT_EQ(x["ops_behind"][0]["node"], 5);
  EXPECT_NEAR(x["ops_behind"][0]["ratio"].get<double>(), 2.0, 1e-9);
  const json& f = (*p)["faults"];
  ASSERT_EQ(f.size(), 5u);
  EXPECT_EQ(f[4]["fault"], "compute: every rank: compute 2x from iteration 2");
  EXPECT_EQ(f[4]["iteration"], 1);
  EXPECT_EQ(f[4]["ranks"], json({1, 0}));
  EXPECT_NEAR(f[4]["t_s"].get<double>(), 150000e-9, 1e-12);  // from the warm-up's start
  // A fault that never took effect says so and why, and has no place on the chart.
  EXPECT_EQ(f[3]["action"], "not applied");
  EXPECT_EQ(f[3]["reason"], "iteration 9 was never reached");
  EXPECT_TRUE(f[3]["iteration"].is_null());
  EXPECT_EQ(f[0]["iteration"], 0);
  // Seconds after the first op, the warm-up at -50 µs (as the terminal summary counts).
  EXPECT_NEAR(f[0]["t_s"].get<double>(), 100000e-9, 1e-12);
  EXPECT_EQ(f[1]["iteration"], 1);
  EXPECT_EQ(f[1]["action"], "clear");
  EXPECT_TRUE(f[2]["iteration"].is_null());
  const json& hosts = (*p)["counters"]["hosts"];
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0]["host"], "h0");
  EXPECT_EQ(hosts[0]["tx_bytes"], 100);
  EXPECT_EQ(hosts[0]["drops"], 7);  // the switch end of h0's link
  EXPECT_EQ(hosts[0]["tcp_retrans_segs"], 3);
  EXPECT_EQ(hosts[0]["tcp_timeouts"], 2);
}

json Doctor(double expected) {
  return {{"hosts", {"h0", "h1", "h2"}},
          {"healthy", false},
          {"expected_gbps", expected},
          {"expected_source", "--expect 400mbit"},
          {"reference_gbps", 0.04},
          {"pairwise",
           {{"gbps", {{nullptr, 0.05, 0.05}, {0.005, nullptr, 0.005}, {0.05, 0.05, nullptr}}},
            {"rtt_us", json::array()},
            {"retransmitted", json::array()}}},
          {"per_host", {{{"host", "h0"}, {"tx_gbps", 0.05}, {"rx_gbps", 0.03}, {"rtt_us", 40}}}},
          {"findings",
           {{{"kind", "slow_transmit"}, {"host", "h1"}, {"value", 0.005}, {"text", "h1: slow"}}}}};
}

// results.json's attribution becomes one stacked bar per attributed iteration: its excess in
// compute, network, contention and rest, with the causes named beside it.
TEST(PageModel, AttributionIsAStackedBarPerFlaggedIteration) {
  json results = Results();
  EXPECT_TRUE((*RunPanel(results, "r.json"))["attribution"].empty());
  AttributionInput in;
  in.iteration = 1;
  in.measured_ns = 300;
  in.expected_ns = 100;
  in.with_compute_ns = 150;
  in.compute = {{0, 110, 60, 0}, {1, 60, 60, 0}};
  OpBehind op;
  op.type = "all_reduce";
  op.ranks = {0, 1};
  op.measured_end_ns = 200;
  op.expected_end_ns = 50;
  in.behind = {op};
  in.places = {{"slow_link", "h1", "h1: both directions slow"}};
  results["attribution"] = AttributionJson({Attribute(in)});
  auto p = RunPanel(results, "r.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const json& a = (*p)["attribution"];
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0]["iteration"], 1);
  EXPECT_EQ(a[0]["compute_ns"], 50);
  EXPECT_EQ(a[0]["network_ns"], 150);
  EXPECT_EQ(a[0]["contention_ns"], 0);
  EXPECT_EQ(a[0]["rest_ns"], 0);
  ASSERT_EQ(a[0]["causes"].size(), 2u);
  EXPECT_EQ(a[0]["causes"][0]["cause"], "network");
  EXPECT_EQ(a[0]["causes"][1]["culprit"], "rank 0");
}

// An iteration in which a rank waited for a core is listed apart: the CPU's, not the network's.
TEST(PageModel, ACpuBoundIterationIsListedWithItsRankAndShare) {
  EXPECT_TRUE((*RunPanel(Results(), "r.json"))["cpu_bound"].is_null());
  auto ranks = testing::RunRanks(0);
  int last = -1;
  for (const auto& r : ranks) last = std::max(last, r.iteration);
  for (auto& r : ranks) {
    r.cpu_wait_ns = r.iteration == last && r.rank == 1 ? (r.finish - r.start) / 2 : 1;
  }
  json results = BuildResultsJson(json{{"genie_version", "9.9"}}, testing::RunOps(0), ranks);
  auto p = RunPanel(results, "r.json");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const json& bound = (*p)["cpu_bound"]["iterations"];
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0]["iteration"], last);
  EXPECT_EQ(bound[0]["rank"], 1);
  EXPECT_GT(bound[0].value("fraction", 0.0), 0.3);
}

TEST(PageModel, HeatMapIsMeasuredOverExpected) {
  json h = HeatMap(Doctor(0.05));
  EXPECT_EQ(h["hosts"].size(), 3u);
  EXPECT_TRUE(h["ratio"][0][0].is_null());
  EXPECT_NEAR(h["ratio"][0][1].get<double>(), 1.0, 1e-12);
  EXPECT_NEAR(h["ratio"][1][0].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(h["ratio"][1][2].get<double>(), 0.1, 1e-12);
  EXPECT_FALSE(h.contains("gbps"));  // the page shows the ratio only (GB/s = ratio x expected)
  EXPECT_EQ(h["expected_source"], "--expect 400mbit");
  EXPECT_EQ(h["findings"][0]["host"], "h1");
  EXPECT_FALSE(h["healthy"].get<bool>());
  // Without an expected rate the yardstick is the median pair.
  json m = HeatMap(Doctor(0));
  EXPECT_NEAR(m["expected_gbps"].get<double>(), 0.04, 1e-12);
  EXPECT_NEAR(m["ratio"][0][1].get<double>(), 1.25, 1e-12);
  // Rounded to the three digits the page shows.
  json odd = Doctor(0.03);
  EXPECT_NEAR(HeatMap(odd)["ratio"][0][1].get<double>(), 1.67, 1e-12);
}

TEST(PageModel, ALargeHeatMapIsRowsOfHexCodes) {
  const int n = static_cast<int>(kDenseHeatMapHosts) + 2;
  json d = Doctor(0.05);
  d["hosts"] = json::array();
  json gbps = json::array();
  for (int i = 0; i < n; ++i) {
    d["hosts"].push_back("h" + std::to_string(i));
    json row = json::array();
    for (int j = 0; j < n; ++j) row.push_back(j == (i + 1) % n ? json(0.025) : json());
    gbps.push_back(row);
  }
  d["pairwise"]["gbps"] = gbps;
  json h = HeatMap(d);
  EXPECT_FALSE(h.contains("ratio"));
  ASSERT_EQ(h["rows_hex"].size(), static_cast<size_t>(n));
  // A ring: row i measured toward i + 1 only, at 0.5 of expected (50 = 0x32).
  EXPECT_EQ(h["rows_hex"][0], "ff32" + std::string(2 * (n - 2), 'f'));
  EXPECT_EQ(h["rows_hex"][n - 1].get<std::string>().substr(0, 2), "32");
  EXPECT_EQ(HeatMapCode(0.994), 99);
  EXPECT_EQ(HeatMapCode(7.0), 254);
  EXPECT_EQ(HeatMapCode(0), 0);
}

TEST(PageModel, LocalizationBecomesTheRunsHeatMap) {
  json results = Results();
  results["localization"] = Doctor(0.05);
  auto p = RunPanel(results, "r.json");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->contains("heatmap"));
  EXPECT_EQ((*p)["heatmap"]["findings"][0]["host"], "h1");
}

TEST(PageModel, DetectsWhatAFileIs) {
  EXPECT_EQ(*DetectInputKind(Results(), "x"), InputKind::kRun);
  EXPECT_EQ(*DetectInputKind(json{{"info", json::object()}, {"rows", json::array()}}, "x"),
            InputKind::kBench);
  EXPECT_EQ(*DetectInputKind(Doctor(0), "x"), InputKind::kDoctor);
  auto bad = DetectInputKind(json{{"a", 1}}, "odd.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("odd.json"), std::string::npos);
}

TEST(PageModel, BenchAndDoctorPanels) {
  json bench = {{"info", {{"collective", "all_reduce"}, {"ranks", 4}}},
                {"rows",
                 {{{"size", 1024}, {"busbw_gbps", 0.002}, {"time_us", 700}},
                  {{"size", 1048576}, {"busbw_gbps", 0.047}, {"time_us", 33000}}}},
                {"avg_busbw_gbps", 0.0245},
                {"wrong", 0},
                {"verdict", nullptr}};
  auto b = PanelFromDocument(bench, "b.json");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)["kind"], "bench");
  EXPECT_EQ((*b)["rows"].size(), 2u);
  EXPECT_NEAR((*b)["avg_busbw_gbps"].get<double>(), 0.0245, 1e-12);
  auto d = PanelFromDocument(Doctor(0.05), "d.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)["kind"], "doctor");
  EXPECT_EQ((*d)["heatmap"]["findings"].size(), 1u);
  EXPECT_TRUE((*d)["incast_send_gbps"].is_null());
  // Sending under incast, and the note the scan gave it, reach the doctor panel.
  json with = Doctor(0.05);
  with["incast_send_gbps"] = 0.019;
  with["incast_send_note"] = "h0 sent 0.019 GB/s to h1 while 6 host(s) sent into it";
  auto n = PanelFromDocument(with, "d.json");
  ASSERT_TRUE(n.ok());
  EXPECT_NEAR((*n)["incast_send_gbps"].get<double>(), 0.019, 1e-12);
  EXPECT_EQ((*n)["incast_send_note"], "h0 sent 0.019 GB/s to h1 while 6 host(s) sent into it");
}

TEST(PageModel, LoadPanelFindsTheTraceBesideTheResults) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "page_model_trace";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "results.json") << Results().dump();
  std::ofstream(dir / "results.trace.json") << "[]";
  auto p = LoadPanel((dir / "results.json").string());
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)["trace"], (dir / "results.trace.json").string());
  auto given = LoadPanel((dir / "results.json").string(), "elsewhere.json");
  EXPECT_EQ((*given)["trace"], "elsewhere.json");
  auto missing = LoadPanel((dir / "nope.json").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("nope.json"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(PageModel, SeveralPanelsSideBySide) {
  json m = PageModel({json{{"name", "a"}}, json{{"name", "b"}}});
  EXPECT_EQ(m["panels"].size(), 2u);
  EXPECT_EQ(m["title"], "a | b");
  EXPECT_EQ(m["generator"], "genie report");
}

// Two runs whose hosts ran different congestion controls (as each rank's header records it):
// the page leads with the settings that differ and each run's step beside its prediction.
TEST(PageModel, RunsDifferingInNetworkSettingsAreComparedAboveThePanels) {
  auto run = [](const std::string& cc, double slower) {
    json provenance = {{"headers", json::array({{{"rank", 0},
                                                 {"host_settings",
                                                  {{"host", "h0"},
                                                   {"tcp_congestion", cc},
                                                   {"tcp_congestion_source", "host default"},
                                                   {"tcp_ecn", "2"}}}}})}};
    json doc = BuildResultsJson(provenance, testing::RunOps(0), testing::RunRanks(0));
    Expectation e;
    e.source = "flow model";
    e.step_ns = static_cast<TimeNs>(80'000 / slower);
    doc["prediction"] = ToJson(Compare(testing::RunOps(0), testing::RunRanks(0), e, 0.25));
    return doc;
  };
  auto bbr = RunPanel(run("bbr", 1.0), "bbr/results.json");
  auto cubic = RunPanel(run("cubic", 1.25), "cubic/results.json");
  ASSERT_TRUE(bbr.ok() && cubic.ok());
  const json m = PageModel({*bbr, *cubic});
  ASSERT_TRUE(m.contains("settings_comparison")) << m.dump(1);
  const json& c = m["settings_comparison"];
  ASSERT_EQ(c["differ"].size(), 1u);
  EXPECT_EQ(c["differ"][0]["values"], json::array({"bbr", "cubic"}));
  EXPECT_EQ(c["runs"][0]["measured_step_ns"], 80'000);
  EXPECT_EQ(c["runs"][1]["predicted_step_ns"], 64'000);
  EXPECT_DOUBLE_EQ(c["runs"][1]["ratio"].get<double>(), 1.25);
  // The same settings twice: no comparison.
  EXPECT_FALSE(PageModel({*bbr, *bbr}).contains("settings_comparison"));
}

}  // namespace
}  // namespace genie::report::html
