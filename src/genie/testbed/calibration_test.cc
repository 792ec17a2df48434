// Calibration from a doctor scan's figures, kept beside the testbed, and the network.yml that
// carries it (no root: a temporary state folder).
#include "genie/testbed/calibration.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "genie/config/network_config.h"
#include "genie/testbed/control.h"
#include "genie/testbed/spec.h"

namespace genie::testbed {
namespace {

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
  auto c = CalibrationFromDoctor(*layout, scan);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_NEAR(c->median_gbps, 0.0475, 1e-9);  // median of 0.046, 0.047, 0.048, 0.049
  EXPECT_NEAR(c->goodput, 0.0475e9 / 50e6, 1e-9);
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

TEST(Calibration, KeptBesideTheTestbedAndCarriedIntoItsNetworkYml) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           ("genie-calib-" + std::to_string(getpid())))
                              .string();
  std::filesystem::create_directories(dir);
  setenv("GENIE_TESTBED_DIR", dir.c_str(), 1);
  const Layout layout = Star4("cal");
  std::ofstream(DescriptionPath("cal")) << layout.ToJson().dump();

  std::string note;
  auto plain = TestbedNetworkYml("cal", 2, -1, &note);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_NE(note.find("uncalibrated"), std::string::npos);
  EXPECT_EQ(plain->find("goodput"), std::string::npos);
  EXPECT_NE(plain->find("latency: [ 30000, 1000 ]"), std::string::npos) << *plain;

  auto c = CalibrationFromDoctor(layout, Scan(0.048, 41.0));
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(SaveCalibration("cal", *c).ok());
  auto loaded = LoadCalibration("cal");
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_DOUBLE_EQ((*loaded)->goodput, c->goodput);

  auto yml = TestbedNetworkYml("cal", 2, -1, &note);
  ASSERT_TRUE(yml.ok());
  EXPECT_NE(note.find("calibrated"), std::string::npos);
  auto net = config::ParseNetworkConfig(*yml, "cal");
  ASSERT_TRUE(net.ok()) << net.status().message() << "\n" << *yml;
  // The testbed's dimension measured; the ranks of one host (loopback) keep the defaults.
  EXPECT_NEAR(net->GoodputOf(0), 0.96, 1e-3);
  EXPECT_DOUBLE_EQ(net->MessageOverheadNsOf(0), 20'500);
  EXPECT_DOUBLE_EQ(net->GoodputOf(1), config::kDefaultGoodput);
  EXPECT_DOUBLE_EQ(net->latency_ns[0], 1);

  std::ofstream(CalibrationPath("cal")) << "{\"goodput\": \"fast\"}";
  auto bad = LoadCalibration("cal");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("calibrate cal"), std::string::npos);
  std::filesystem::remove_all(dir);
  unsetenv("GENIE_TESTBED_DIR");
}

}  // namespace
}  // namespace genie::testbed
