// `genie testbed calibrate`'s pure parts: the scan it runs (an argument vector, no shell) and
// what it says once the calibration is saved. The scan itself needs a testbed (root): the
// testbed e2e test runs it.
#include "genie/driver/testbed_calibrate.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "genie/testbed/spec.h"

namespace genie::driver {
namespace {

testbed::Layout Star(int hosts) {
  testbed::TestbedSpec spec;
  spec.name = "cal";
  EXPECT_TRUE(testbed::ParseTopology("star:" + std::to_string(hosts), &spec).ok());
  spec.rate_bps = 1'000'000'000;
  auto layout = testbed::LayOut(spec);
  EXPECT_TRUE(layout.ok()) << layout.status().message();
  return *layout;
}

TEST(TestbedCalibrate, ScanIsGenieDoctorOnePerHostAsAnArgumentVector) {
  EXPECT_EQ(CalibrationScanArgv("/opt/genie", "my tb", 4, false, "/run/x/my tb.scan.json"),
            (testbed::Argv{"/opt/genie", "launch", "--testbed", "my tb", "-n", "4", "--", "doctor",
                           "--bytes", "16MiB", "--ring-steps", "healthy", "--json",
                           "/run/x/my tb.scan.json"}));
  // Accepted findings still need the ring steps, which the doctor skips on findings.
  const testbed::Argv accepted = CalibrationScanArgv("g", "t", 2, true, "j");
  ASSERT_EQ(accepted.size(), 14u);
  EXPECT_EQ(accepted[11], "always");
}

TEST(TestbedCalibrate, SaysOnePairAllHostsAndWhatTheDescriptionUses) {
  setenv("GENIE_TESTBED_DIR", "/tmp/genie-cal-test", 1);
  const testbed::Layout layout = Star(4);
  testbed::Calibration cal;
  cal.goodput = 0.9412;
  cal.median_gbps = 0.11765;
  cal.message_overhead_ns = 42'300;
  cal.median_rtt_us = 84.6;
  cal.basis = testbed::kBasisOnePair;
  EXPECT_EQ(FormatCalibration("cal", layout, cal),
            "testbed cal: one pair: goodput 0.941 of 1gbit (median pair 0.1177 GB/s), message "
            "overhead 42.3 us (median round trip 84.6 us)\n"
            "testbed cal: the description uses one-pair (goodput 0.941, message overhead 42.3 "
            "us); saved in /tmp/genie-cal-test/cal.calibration.json; `genie testbed network-yml "
            "cal` and `genie run --predict` on it use them\n");
  // With ring steps, every host's figures too, and the description carries them.
  cal.all_hosts_goodput = 0.8;
  cal.all_hosts_gbps = 0.1;
  cal.all_hosts_overhead_ns = 120'000;
  cal.basis = testbed::kBasisAllHosts;
  const std::string text = FormatCalibration("cal", layout, cal);
  EXPECT_NE(text.find("testbed cal: all hosts at once (ring steps): goodput 0.800 (0.1000 GB/s), "
                      "120.0 us per step\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the description uses all-hosts (goodput 0.800, message overhead 120.0 us)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("the first"), std::string::npos) << text;
  // Scanned on the first 2 of its 4 hosts (--hosts 2): said with the figures.
  cal.ring_steps = {{"ring", 2}};
  const std::string two = FormatCalibration("cal", layout, cal);
  EXPECT_NE(two.find("120.0 us per step, the first 2 of its 4 hosts\n"), std::string::npos) << two;
  unsetenv("GENIE_TESTBED_DIR");
}

// Eight hosts of 1 Gbit/s ask 1.5 GB/s of a 2-core machine's 4.3: nothing to say; at 4 Gbit/s
// 6 GB/s, and the cores, not the links, set the pace (the fourth grid of docs/accuracy.md).
TEST(TestbedCalibrate, SaysWhenTheHostsAskMoreCopyingThanTheCoresGive) {
  testbed::Layout layout = Star(8);
  EXPECT_EQ(MachineNote(layout, 8, 1, 2), "");
  layout.spec.rate_bps = 4'000'000'000;
  for (auto& link : layout.links) link.rate_bps = 4'000'000'000;
  const std::string busy = MachineNote(layout, 8, 1, 2);
  EXPECT_EQ(busy.find("its 8 hosts sending at 4gbit at once ask 6.0 GB/s"), 0u) << busy;
  EXPECT_NE(busy.find("its 2 core(s) give about 4.3"), std::string::npos) << busy;
  EXPECT_NE(busy.find("the cores, not the links, set the pace"), std::string::npos) << busy;
  EXPECT_EQ(MachineNote(layout, 8, 1, 4), "");  // twice the cores keep up
  EXPECT_EQ(MachineNote(layout, 4, 1, 2), "");  // half the hosts too
  EXPECT_NE(MachineNote(layout, 4, 2, 2), "");  // unless each sends on two rails
}

}  // namespace
}  // namespace genie::driver
