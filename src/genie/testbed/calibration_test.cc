// Calibration from a doctor scan's figures, kept beside the testbed, and the network.yml that
// carries it (no root: a temporary state folder).
#include "genie/testbed/calibration.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/config/network_config.h"
#include "genie/env/faulty_env.h"
#include "genie/env/manual_env.h"
#include "genie/testbed/control.h"
#include "genie/testbed/spec.h"
#include "tests/support/temp_dir.h"

namespace genie::testbed {
namespace {

using ::genie::testing::TempDir;

Layout Star4(const std::string& name) {
  TestbedSpec s;
  s.name = name;
  EXPECT_TRUE(ParseTopology("star:4", &s).ok());
  s.rate_bps = 400'000'000;
  auto l = LayOut(s);
  EXPECT_TRUE(l.ok());
  return *l;
}

nlohmann::json Scan(double gbps, double rtt_us, nlohmann::json findings = nlohmann::json::array()) {
  return {{"reference_gbps", gbps}, {"reference_rtt_us", rtt_us}, {"findings", findings}};
}

// bbr's PROBE_RTT goes into the description when the run's congestion control is bbr (without
// a run, the calibration's), and parses as the flow model's key; under cubic, nothing. What a
// probing connection moves is a share of its link's rate: the measured 0.015 GB/s at 1 Gbit/s,
// a tenth of it at 100 Mbit/s (where 0.015 GB/s is more than the link).
TEST(Calibration, ProbeRttLinesFollowTheRunsCongestionControlAndTheLinkRate) {
  const std::map<std::string, std::string> bbr = {{"tcp_congestion", "bbr"}};
  const std::map<std::string, std::string> cubic = {{"tcp_congestion", "cubic"}};
  Calibration measured_under_bbr;
  measured_under_bbr.settings = bbr;
  constexpr uint64_t kGbit = 1'000'000'000;
  EXPECT_EQ(ProbeRttYml(&cubic, measured_under_bbr, kGbit), "");
  EXPECT_EQ(ProbeRttYml(nullptr, std::nullopt, kGbit), "");
  const std::string lines = ProbeRttYml(nullptr, measured_under_bbr, kGbit);
  EXPECT_EQ(ProbeRttYml(&bbr, std::nullopt, kGbit), lines);
  const std::map<std::string, std::string> silent = {{"tcp_ecn", "2"}};
  EXPECT_EQ(ProbeRttYml(&silent, measured_under_bbr, kGbit), lines);
  auto parse = [](const std::string& probe) {
    return config::ParseNetworkConfig(
        "topology: [ Switch ]\nnpus_count: [ 4 ]\nbandwidth: [ 1 ]\nlatency: [ 1 ]\n" + probe,
        "t.yml");
  };
  auto net = parse(lines);
  ASSERT_TRUE(net.ok()) << net.status().ToString() << "\n" << lines;
  EXPECT_EQ(net->probe_rtt.interval_ns, kProbeRttIntervalNs);
  EXPECT_EQ(net->probe_rtt.duration_ns, kProbeRttDurationNs);
  EXPECT_NEAR(net->probe_rtt.gbps, kProbeRttGbps, 1e-6);
  auto slow = parse(ProbeRttYml(&bbr, std::nullopt, kGbit / 10));
  ASSERT_TRUE(slow.ok());
  EXPECT_NEAR(slow->probe_rtt.gbps, kProbeRttGbps / 10, 1e-7);
  auto unknown = parse(ProbeRttYml(&bbr, std::nullopt, 0));
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->probe_rtt.gbps, kProbeRttGbps);
}

TEST(Calibration, GoodputIsTheMedianPairOverTheLinkRateAndOverheadHalfTheRoundTrip) {
  auto c = CalibrationFromDoctor(Star4("tb"), Scan(0.0475, 40.0));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->goodput, 0.0475e9 / 50e6, 1e-9);  // 400 Mbit/s = 50 MB/s
  EXPECT_DOUBLE_EQ(c->message_overhead_ns, 20'000);
  EXPECT_FALSE(c->measured.empty());
}

// On a leaf-spine whose spines are at half the host rate, pairs across leaves read half; the
// goodput of the host links is the median of the pairs within a leaf.
TEST(Calibration, OnALeafSpineGoodputComesFromPairsWithinALeaf) {
  TestbedSpec s;
  s.name = "ls";
  ASSERT_TRUE(ParseTopology("leafspine:2x1x2", &s).ok());
  s.rate_bps = 400'000'000;
  s.spine_rate_bps = 200'000'000;
  auto layout = LayOut(s);
  ASSERT_TRUE(layout.ok());
  nlohmann::json scan = Scan(0.024, 40.0);  // the median pair crosses the spine
  scan["hosts"] = {"h0", "h1", "h2", "h3"};
  const nlohmann::json x;  // not measured
  scan["pairwise"]["gbps"] = {{x, 0.047, 0.024, 0.024},
                              {0.048, x, 0.024, 0.023},
                              {0.024, 0.024, x, 0.046},
                              {0.024, 0.024, 0.049, x}};
  // Its ring steps run in a ring per leaf, both leaves at once: every host sent.
  scan["ring_steps"] = {{"alpha_ns", 60'000.0}, {"gbps", 0.045}, {"ring", 2}};
  auto c = CalibrationFromDoctor(*layout, scan);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->median_gbps, 0.0475, 1e-9);  // median of 0.046, 0.047, 0.048, 0.049
  EXPECT_NEAR(c->goodput, 0.0475e9 / 50e6, 1e-9);
  EXPECT_EQ(c->ScannedHosts(), 4);
  EXPECT_EQ(HostCountNote(*c, 4, "ls"), "");
  EXPECT_EQ(c->ToJson()["scanned_hosts"], 4);
  // Without the matrix, the scan's median pair.
  auto plain = CalibrationFromDoctor(*layout, Scan(0.0475, 40.0));
  ASSERT_TRUE(plain.ok());
  EXPECT_NEAR(plain->goodput, 0.0475e9 / 50e6, 1e-9);
}

TEST(Calibration, AScanWithFindingsIsRefusedUnlessAccepted) {
  const auto found = nlohmann::json::array({{{"text", "h2: transmit side slow"}}});
  auto c = CalibrationFromDoctor(Star4("tb"), Scan(0.0475, 40.0, found));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("h2: transmit side slow"), std::string::npos);
  EXPECT_NE(c.status().message().find("--accept-findings"), std::string::npos);
  EXPECT_TRUE(CalibrationFromDoctor(Star4("tb"), Scan(0.0475, 40.0, found), true).ok());
  EXPECT_FALSE(CalibrationFromDoctor(Star4("tb"), nlohmann::json::object()).ok());
  EXPECT_FALSE(CalibrationFromDoctor(Star4("tb"), Scan(0, 40)).ok());
}

// With every host active (the doctor's ring steps, fitted): goodput = the fitted rate over the
// link's, overhead = alpha. The default basis is all-hosts; one-pair keeps the pair's figures;
// a scan without ring steps (an older genie) falls back to one-pair and says so.
TEST(Calibration, AllHostsFiguresFromTheRingStepsAndTheBasisSaysWhichIsUsed) {
  nlohmann::json scan = Scan(0.0475, 40.0);
  scan["ring_steps"] = {{"alpha_ns", 60'000.0}, {"gbps", 0.045}, {"ring", 4}};
  auto c = CalibrationFromDoctor(Star4("tb"), scan);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->basis, kBasisAllHosts);
  EXPECT_NEAR(c->all_hosts_goodput, 0.045e9 / 50e6, 1e-9);
  EXPECT_DOUBLE_EQ(c->all_hosts_overhead_ns, 60'000);
  EXPECT_NEAR(c->Costs().goodput, 0.9, 1e-9);
  EXPECT_DOUBLE_EQ(c->Costs().message_overhead_ns, 60'000);
  EXPECT_NEAR(c->goodput, 0.95, 1e-9);  // the pair's, recorded beside
  EXPECT_EQ(c->ToJson()["all_hosts"]["ring_steps"]["ring"], 4);

  auto pair = CalibrationFromDoctor(Star4("tb"), scan, false, kBasisOnePair);
  ASSERT_TRUE(pair.ok());
  EXPECT_EQ(pair->basis, kBasisOnePair);
  EXPECT_NEAR(pair->Costs().goodput, 0.95, 1e-9);
  EXPECT_DOUBLE_EQ(pair->Costs().message_overhead_ns, 20'000);
  EXPECT_NEAR(pair->all_hosts_goodput, 0.9, 1e-9);  // recorded all the same

  auto old = CalibrationFromDoctor(Star4("tb"), Scan(0.0475, 40.0));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->basis, kBasisOnePair);
  EXPECT_FALSE(old->ToJson().contains("all_hosts"));
  EXPECT_FALSE(CalibrationFromDoctor(Star4("tb"), scan, false, "both").ok());
  // A fit above the link's rate (tbf's burst) is clipped to goodput 1.
  scan["ring_steps"]["gbps"] = 0.06;
  EXPECT_DOUBLE_EQ(CalibrationFromDoctor(Star4("tb"), scan)->all_hosts_goodput, 1.0);
}

// With the ring steps per size, the rate is the bulk steps' (sizes of at least 1/8 of the
// largest), not the fit over every size: a shaper's burst lets the small steps out faster
// than the link (here at 1.2 x its 50 MB/s), which pulls the all-size fit above the rate a
// link full of queued messages gets (0.9 x). The doctor's alpha stays the overhead.
TEST(Calibration, AllHostsRateIsTheBulkStepsRate) {
  nlohmann::json scan = Scan(0.0475, 40.0);
  std::vector<double> bytes, ns;
  for (double b = 16384; b <= (2 << 20); b *= 2) {
    bytes.push_back(b);
    ns.push_back(b >= 262144 ? 100'000 + b / 0.045 : 50'000 + b / 0.060);
  }
  scan["ring_steps"] = {{"alpha_ns", 40'000.0},
                        {"gbps", 0.052},
                        {"ring", 4},
                        {"message_bytes", bytes},
                        {"step_ns", ns}};
  auto c = CalibrationFromDoctor(Star4("tb"), scan);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->all_hosts_gbps, 0.045, 1e-9);
  EXPECT_NEAR(c->Costs().goodput, 0.9, 1e-9);
  EXPECT_DOUBLE_EQ(c->Costs().message_overhead_ns, 40'000);
  EXPECT_EQ(c->Costs().message_times.size(), bytes.size());  // each size's own time, as before
  // One bulk size only: the doctor's fit (clipped to the link's rate).
  scan["ring_steps"]["message_bytes"] = {16384.0, 2097152.0};
  scan["ring_steps"]["step_ns"] = {300'000.0, 46'700'000.0};
  EXPECT_DOUBLE_EQ(CalibrationFromDoctor(Star4("tb"), scan)->all_hosts_goodput, 1.0);
}

// An all-hosts calibration records how many hosts sent at once (its ring); a run on another
// number of hosts is told, with the command that measures its own.
TEST(Calibration, ARunOnAnotherNumberOfHostsThanCalibratedIsTold) {
  Calibration c;
  c.basis = kBasisAllHosts;
  c.ring_steps = {{"ring", 16}, {"gbps", 0.11}};
  EXPECT_EQ(c.ScannedHosts(), 16);
  const std::string note = HostCountNote(c, 8, "tb");
  EXPECT_NE(note.find("calibrated with 16 hosts sending at once, this run used 8"),
            std::string::npos)
      << note;
  EXPECT_NE(note.find("genie testbed calibrate tb --hosts 8"), std::string::npos) << note;
  EXPECT_EQ(HostCountNote(c, 16, "tb"), "");
  EXPECT_EQ(HostCountNote(c, 1, "tb"), "");  // one host: no ring to measure
  c.basis = kBasisOnePair;                   // one pair alone: no hosts sharing cores
  EXPECT_EQ(HostCountNote(c, 8, "tb"), "");
  c.basis = kBasisAllHosts;
  c.ring_steps = nlohmann::json::object();  // an older calibration: not recorded
  EXPECT_EQ(c.ScannedHosts(), 0);
  EXPECT_EQ(HostCountNote(c, 8, "tb"), "");
}

// Shaped links (the scan's ring steps carry the testbed's burst and each size's first and early
// steps with the buckets full): the floor of a size held by the software (its steady step
// slower than its bytes at the bulk rate) is its early steps' time; of any other size its first
// step (at most its steady one); and a floor never drops below a smaller size's. Both reach
// the network description as `burst` and `burst_message_times`; a scan without them, none.
TEST(Calibration, ShapedLinksGetTheirBurstAndTheFloorOfEachSize) {
  nlohmann::json scan = Scan(0.0475, 40.0);
  // Bulk rate about 0.05 B/ns (50 MB/s): 8 KiB takes 164 us on the wire, 1 MiB 21 ms.
  const std::vector<double> bytes = {8192, 65536, 262144, 1048576};
  scan["ring_steps"] = {{"alpha_ns", 40'000.0},
                        {"gbps", 0.05},
                        {"ring", 4},
                        {"message_bytes", bytes},
                        {"step_ns", {400'000.0, 1'320'000.0, 5'250'000.0, 21'000'000.0}},
                        {"first_step_ns", {150'000.0, 140'000.0, 3'000'000.0, 21'500'000.0}},
                        {"early_step_ns", {420'000.0, 1'100'000.0, 4'900'000.0, 20'900'000.0}},
                        {"burst_bytes", 131072}};
  const Layout layout = Star4("tb");
  auto c = CalibrationFromDoctor(layout, scan);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const MeasuredCosts costs = c->Costs();
  EXPECT_DOUBLE_EQ(costs.burst_bytes, 131072);
  const std::vector<std::pair<double, double>> floors = {
      {8192, 420'000},         // held by the software: its early steps
      {65536, 420'000},        // its first step, raised to the smaller size's floor
      {262144, 3'000'000},     // its first step
      {1048576, 21'000'000}};  // its first step, at most its steady one
  EXPECT_EQ(costs.burst_message_times, floors);
  auto net = config::ParseNetworkConfig(ToNetworkYml(layout, 2, 1, &costs), "tb");
  ASSERT_TRUE(net.ok()) << net.status().message();
  EXPECT_DOUBLE_EQ(net->BurstBytesOf(0), 131072);
  EXPECT_DOUBLE_EQ(net->BurstBytesOf(1), 0);  // the ranks of one host: loopback, no shaper
  EXPECT_EQ(net->burst_message_times, floors);
  // On a leaf-spine the spine links are shaped too: dimension 1 carries their bucket (tbf's
  // burst at their rate, 1 ms of 5 Gbit/s), dimension 0 the scan's.
  TestbedSpec spec;
  spec.name = "ls";
  ASSERT_TRUE(ParseTopology("leafspine:2x1x2", &spec).ok());
  spec.rate_bps = 10'000'000'000;
  spec.spine_rate_bps = 5'000'000'000;
  auto ls = LayOut(spec);
  ASSERT_TRUE(ls.ok());
  auto ls_net = config::ParseNetworkConfig(ToNetworkYml(*ls, 1, 1, &costs), "ls");
  ASSERT_TRUE(ls_net.ok()) << ls_net.status().message();
  EXPECT_DOUBLE_EQ(ls_net->BurstBytesOf(0), 131072);
  EXPECT_DOUBLE_EQ(ls_net->BurstBytesOf(1), 625000);
  // A size whose early steps are clearly slower than its steady ones (a leaf-spine: steady
  // steps within a leaf, early ones round every host) is held by the software too, though its
  // steady step reads its bytes at the rate.
  scan["ring_steps"]["step_ns"] = {170'000.0, 1'320'000.0, 5'250'000.0, 21'000'000.0};
  scan["ring_steps"]["early_step_ns"] = {240'000.0, 1'100'000.0, 4'900'000.0, 20'900'000.0};
  EXPECT_EQ(CalibrationFromDoctor(layout, scan)->Costs().burst_message_times.front(),
            (std::pair<double, double>{8192, 240'000}));
  scan["ring_steps"]["early_step_ns"] = {180'000.0, 1'100'000.0, 4'900'000.0, 20'900'000.0};
  EXPECT_EQ(CalibrationFromDoctor(layout, scan)->Costs().burst_message_times.front(),
            (std::pair<double, double>{8192, 150'000}));  // within 10 %: its first step
  // A size a bucket lets out three at a time whose early steps (a chain) beat its first step
  // after the idle spell: the chain's time. A larger size's early step is not a chain.
  scan["ring_steps"]["early_step_ns"] = {120'000.0, 120'000.0, 4'900'000.0, 20'900'000.0};
  const MeasuredCosts chained = CalibrationFromDoctor(layout, scan)->Costs();
  EXPECT_EQ(chained.burst_message_times[0], (std::pair<double, double>{8192, 120'000}));
  EXPECT_EQ(chained.burst_message_times[1], (std::pair<double, double>{65536, 140'000}));
  // Without the steps with the buckets full (an older genie, or no shaper known): none.
  scan["ring_steps"].erase("early_step_ns");
  const MeasuredCosts plain = CalibrationFromDoctor(layout, scan)->Costs();
  EXPECT_DOUBLE_EQ(plain.burst_bytes, 0);
  EXPECT_TRUE(plain.burst_message_times.empty());
  auto plain_net = config::ParseNetworkConfig(ToNetworkYml(layout, 1, 1, &plain), "tb");
  ASSERT_TRUE(plain_net.ok());
  EXPECT_TRUE(plain_net->burst_bytes.empty());
  EXPECT_FALSE(plain_net->message_times.empty());
}

TEST(Calibration, KeptBesideTheTestbedAndCarriedIntoItsNetworkYml) {
  const TempDir tmp("calibration");
  const std::string dir = tmp.path();
  setenv("GENIE_TESTBED_DIR", dir.c_str(), 1);
  const Layout layout = Star4("cal");
  std::ofstream(DescriptionPath("cal")) << layout.ToJson().dump();

  std::string note;
  auto plain = TestbedNetworkYml("cal", 2, -1, &note);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_NE(note.find("uncalibrated"), std::string::npos);
  // Uncalibrated, the testbed's dimension at the default goodput; the loopback's is its own.
  EXPECT_NE(plain->find("goodput: [ 0.94, 1 ]"), std::string::npos) << *plain;
  EXPECT_NE(plain->find("latency: [ 30000, 1000 ]"), std::string::npos) << *plain;

  auto c = CalibrationFromDoctor(layout, Scan(0.048, 41.0));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(SaveCalibration("cal", *c).ok());
  auto loaded = LoadCalibration("cal");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_DOUBLE_EQ((*loaded)->goodput, c->goodput);
  EXPECT_EQ((*loaded)->basis, kBasisOnePair);  // this scan had no ring steps

  auto yml = TestbedNetworkYml("cal", 2, -1, &note);
  ASSERT_TRUE(yml.ok());
  EXPECT_NE(note.find("calibrated"), std::string::npos);
  auto net = config::ParseNetworkConfig(*yml, "cal");
  ASSERT_TRUE(net.ok()) << net.status().message() << "\n" << *yml;
  // The testbed's dimension measured; the ranks of one host (loopback) keep their own.
  EXPECT_NEAR(net->GoodputOf(0), 0.96, 1e-3);
  EXPECT_DOUBLE_EQ(net->MessageOverheadNsOf(0), 20'500);
  EXPECT_DOUBLE_EQ(net->GoodputOf(1), config::kHostLoopbackGoodput);
  EXPECT_EQ(net->loopback_dimension, 1);
  EXPECT_GT(net->machine_gbps, 0);  // this machine's cores
  EXPECT_DOUBLE_EQ(net->latency_ns[0], 1);

  // All hosts at once: the description carries those, and the note says so.
  nlohmann::json scan = Scan(0.048, 41.0);
  scan["ring_steps"] = {{"alpha_ns", 55'000.0}, {"gbps", 0.044}};
  auto all = CalibrationFromDoctor(layout, scan);
  ASSERT_TRUE(all.ok() && SaveCalibration("cal", *all).ok());
  auto reloaded = LoadCalibration("cal");
  ASSERT_TRUE(reloaded.ok() && reloaded->has_value());
  EXPECT_EQ((*reloaded)->basis, kBasisAllHosts);
  EXPECT_DOUBLE_EQ((*reloaded)->all_hosts_overhead_ns, 55'000);
  auto all_yml = TestbedNetworkYml("cal", 1, -1, &note);
  ASSERT_TRUE(all_yml.ok());
  EXPECT_NE(note.find("all-hosts"), std::string::npos) << note;
  auto all_net = config::ParseNetworkConfig(*all_yml, "cal");
  ASSERT_TRUE(all_net.ok()) << all_net.status().message();
  EXPECT_NEAR(all_net->GoodputOf(0), 0.88, 1e-3);
  EXPECT_DOUBLE_EQ(all_net->MessageOverheadNsOf(0), 55'000);
  EXPECT_TRUE(all_net->message_times.empty());  // no sizes in this scan's ring steps

  // The ring steps per size reach the description as the flow model's message_times (after a
  // save and a load), sizes out of order or unusable left out; one-pair carries none.
  scan["ring_steps"]["message_bytes"] = {8192.0, 65536.0, 4096.0, 524288.0};
  scan["ring_steps"]["step_ns"] = {180'000.0, 1'200'000.0, 90'000.0, -1.0};
  auto sized = CalibrationFromDoctor(layout, scan);
  ASSERT_TRUE(sized.ok() && SaveCalibration("cal", *sized).ok());
  auto sized_yml = TestbedNetworkYml("cal", 1, -1, &note);
  ASSERT_TRUE(sized_yml.ok());
  auto sized_net = config::ParseNetworkConfig(*sized_yml, "cal");
  ASSERT_TRUE(sized_net.ok()) << sized_net.status().message();
  EXPECT_EQ(sized_net->message_times,
            (std::vector<std::pair<double, double>>{{8192, 180'000}, {65536, 1'200'000}}));
  EXPECT_TRUE(
      CalibrationFromDoctor(layout, scan, false, kBasisOnePair)->Costs().message_times.empty());
  // A size measured slower than a larger one (a step that waited on busy cores) takes the
  // larger one's time: a message never takes less time than a smaller one.
  scan["ring_steps"]["message_bytes"] = {8192.0, 16384.0, 32768.0};
  scan["ring_steps"]["step_ns"] = {338'000.0, 276'000.0, 400'000.0};
  EXPECT_EQ(CalibrationFromDoctor(layout, scan)->Costs().message_times,
            (std::vector<std::pair<double, double>>{
                {8192, 276'000}, {16384, 276'000}, {32768, 400'000}}));

  std::ofstream(CalibrationPath("cal")) << "{\"goodput\": \"fast\"}";
  auto bad = LoadCalibration("cal");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("calibrate cal"), std::string::npos);
  unsetenv("GENIE_TESTBED_DIR");
}

// The calibration file through an Env: saved and loaded in memory under the Env's
// GENIE_TESTBED_DIR, and a state folder that cannot be written is an error naming the file.
TEST(CalibrationTest, SavedAndLoadedThroughTheEnvAndAReadOnlyStateDirIsAClearError) {
  env::ManualEnv manual;
  manual.SetEnv("GENIE_TESTBED_DIR", "/state");
  ASSERT_TRUE(manual.CreateDir("/state").ok());
  env::FaultyEnv env(&manual);
  EXPECT_EQ(CalibrationPath("cal", &env), "/state/cal.calibration.json");
  auto none = LoadCalibration("cal", &env);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto c = CalibrationFromDoctor(Star4("cal"), Scan(0.048, 41.0));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(SaveCalibration("cal", *c, &env).ok());
  EXPECT_FALSE(manual.FileExists("/state/cal.calibration.json.tmp"));
  auto loaded = LoadCalibration("cal", &env);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_DOUBLE_EQ((*loaded)->goodput, c->goodput);
  env.SetReadOnly("/state");
  Status st = SaveCalibration("cal", *c, &env);
  EXPECT_EQ(st.code(), Status::Code::kIoError);
  EXPECT_EQ(st.message(),
            "cannot write /state/cal.calibration.json.tmp: check that the folder is writable");
}

// The retransmission timeouts the hosts counted during the scan are kept (-1: not counted, an
// older genie) and, when there were some, said: the testbed's queues drop.
TEST(CalibrationTest, TheScansRetransmissionTimeoutsAreKeptAndSaid) {
  env::ManualEnv env;
  env.SetEnv("GENIE_TESTBED_DIR", "/state");
  ASSERT_TRUE(env.CreateDir("/state").ok());
  auto c = CalibrationFromDoctor(Star4("cal"), Scan(0.048, 41.0));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->scan_timeouts, -1);
  EXPECT_FALSE(c->ToJson().contains("scan_timeouts"));
  EXPECT_EQ(TimeoutNote(*c, "cal"), "");
  c->scan_timeouts = 0;
  EXPECT_EQ(TimeoutNote(*c, "cal"), "");
  c->scan_timeouts = 45;
  const std::string note = TimeoutNote(*c, "cal");
  EXPECT_NE(note.find("testbed cal: its queues drop: 45 TCP retransmission timeout(s)"),
            std::string::npos)
      << note;
  ASSERT_TRUE(SaveCalibration("cal", *c, &env).ok());
  auto loaded = LoadCalibration("cal", &env);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->scan_timeouts, 45);
}

// A run predicted from a calibration carries what calibrate said of it (each note once, in
// order: the host count's, the timeouts', the incast's), and nothing when it said nothing.
TEST(Calibration, ARunPredictedFromItCarriesCalibratesNotes) {
  Calibration c;
  c.basis = kBasisAllHosts;
  c.ring_steps = {{"ring", 8}, {"gbps", 0.11}};
  EXPECT_TRUE(RunNotes(c, "tb", 8, 0.45).empty());
  c.scan_timeouts = 3;
  c.incast_send = 0.30;
  std::vector<std::string> notes = RunNotes(c, "tb", 8, 0.45);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], TimeoutNote(c, "tb"));
  EXPECT_EQ(notes[1], IncastSendNote(c, "tb", 0.45));
  EXPECT_NE(notes[1].find("sent 0.30 of what it sends alone"), std::string::npos) << notes[1];
  notes = RunNotes(c, "tb", 4, 0.25);  // another host count; the incast above the share
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0], HostCountNote(c, 4, "tb"));
  EXPECT_EQ(notes[1], TimeoutNote(c, "tb"));
}

// The doctor's sending under incast, over its sending alone: kept, saved, and said below the
// share the doctor names (bounded windows: runs with such hosts are slower than predicted).
TEST(CalibrationTest, SendingUnderIncastIsKeptAndSaidBelowTheShare) {
  env::ManualEnv env;
  env.SetEnv("GENIE_TESTBED_DIR", "/state");
  ASSERT_TRUE(env.CreateDir("/state").ok());
  auto none = CalibrationFromDoctor(Star4("cal"), Scan(0.048, 41.0));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->incast_send, -1);
  EXPECT_FALSE(none->ToJson().contains("incast_send"));
  EXPECT_EQ(IncastSendNote(*none, "cal", 0.6), "");
  nlohmann::json scan = Scan(0.048, 41.0);
  scan["incast_send_share"] = 0.4;
  auto c = CalibrationFromDoctor(Star4("cal"), scan);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->incast_send, 0.4, 1e-9);
  const std::string note = IncastSendNote(*c, "cal", 0.6);
  EXPECT_NE(note.find("testbed cal: a host receiving from the others sent 0.40 of what it sends "
                      "alone"),
            std::string::npos)
      << note;
  EXPECT_EQ(IncastSendNote(*c, "cal", 0.35), "");
  ASSERT_TRUE(SaveCalibration("cal", *c, &env).ok());
  auto loaded = LoadCalibration("cal", &env);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_NEAR((*loaded)->incast_send, 0.4, 1e-9);
}

// Calibrations under different network settings are kept side by side (the latest on top);
// a run is predicted with the one measured under its own settings, and told when there is none.
TEST(CalibrationTest, OneCalibrationPerSettingsAndTheRunsOwnIsChosen) {
  env::ManualEnv env;
  env.SetEnv("GENIE_TESTBED_DIR", "/state");
  ASSERT_TRUE(env.CreateDir("/state").ok());
  const Layout layout = Star4("cal");
  const std::map<std::string, std::string> bbr = {{"tcp_congestion", "bbr"}, {"tcp_ecn", "2"}};
  const std::map<std::string, std::string> cubic = {{"tcp_congestion", "cubic"}, {"tcp_ecn", "2"}};
  auto under_bbr = CalibrationFromDoctor(layout, Scan(0.048, 41.0));
  auto under_cubic = CalibrationFromDoctor(layout, Scan(0.040, 60.0));
  ASSERT_TRUE(under_bbr.ok() && under_cubic.ok());
  under_bbr->settings = bbr;
  under_cubic->settings = cubic;
  ASSERT_TRUE(SaveCalibration("cal", *under_bbr, &env).ok());
  ASSERT_TRUE(SaveCalibration("cal", *under_cubic, &env).ok());

  auto latest = LoadCalibration("cal", &env);
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->settings, cubic);
  auto for_bbr = LoadCalibrationFor("cal", bbr, &env);
  ASSERT_TRUE(for_bbr.ok() && for_bbr->has_value());
  EXPECT_TRUE((*for_bbr)->matched);
  EXPECT_EQ((*for_bbr)->kept, 2);
  EXPECT_DOUBLE_EQ((*for_bbr)->calibration.goodput, under_bbr->goodput);
  // Settings no calibration was measured under: the latest, not matched.
  auto for_reno = LoadCalibrationFor("cal", {{"tcp_congestion", "reno"}, {"tcp_ecn", "2"}}, &env);
  ASSERT_TRUE(for_reno.ok() && for_reno->has_value());
  EXPECT_FALSE((*for_reno)->matched);
  EXPECT_EQ((*for_reno)->calibration.settings, cubic);

  // Calibrating again under the same settings replaces that one, the others stay.
  auto again = CalibrationFromDoctor(layout, Scan(0.046, 45.0));
  ASSERT_TRUE(again.ok());
  again->settings = bbr;
  ASSERT_TRUE(SaveCalibration("cal", *again, &env).ok());
  for_bbr = LoadCalibrationFor("cal", bbr, &env);
  ASSERT_TRUE(for_bbr.ok() && for_bbr->has_value());
  EXPECT_EQ((*for_bbr)->kept, 2);
  EXPECT_DOUBLE_EQ((*for_bbr)->calibration.goodput, again->goodput);
  EXPECT_TRUE((*LoadCalibrationFor("cal", cubic, &env))->matched);
}

}  // namespace
}  // namespace genie::testbed
