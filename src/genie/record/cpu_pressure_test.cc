#include "genie/record/cpu_pressure.h"

#include <gtest/gtest.h>

namespace genie::record {
namespace {

TEST(CpuPressure, ReadsThePsiSomeTotal) {
  EXPECT_EQ(ParsePsiSomeTotal("some avg10=11.70 avg60=11.63 avg300=10.52 total=13880703940\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"),
            13880703940u);
  EXPECT_FALSE(ParsePsiSomeTotal("").has_value());
  EXPECT_FALSE(ParsePsiSomeTotal("some avg10=1.0\n").has_value());
}

CpuPressureReading At(TimeNs t, std::optional<uint64_t> some_us, uint64_t busy, uint64_t all) {
  CpuPressureReading r;
  r.at_ns = t;
  r.some_us = some_us;
  r.busy_ticks = busy;
  r.all_ticks = all;
  r.cores = 2;
  return r;
}

TEST(CpuPressure, ASaturatedMachineIsContendedAnIdleOneIsNot) {
  // 10 s: tasks waited 8.7 s of it, the CPUs 96 % busy.
  CpuPressure p = PressureBetween(At(0, 0, 0, 0), At(10'000'000'000, 8'700'000, 1920, 2000));
  EXPECT_NEAR(p.some_fraction, 0.87, 1e-9);
  EXPECT_NEAR(p.busy_fraction, 0.96, 1e-9);
  EXPECT_TRUE(p.contended());
  EXPECT_NE(p.Describe().find("87 % of the 10.0 s"), std::string::npos) << p.Describe();
  CpuPressure idle = PressureBetween(At(0, 0, 0, 0), At(10'000'000'000, 2'500'000, 800, 2000));
  EXPECT_FALSE(idle.contended());
  EXPECT_EQ(idle.ToJson()["contended"], false);
}

TEST(CpuPressure, WithoutPsiTheBusyShareDecides) {
  CpuPressure p = PressureBetween(At(0, std::nullopt, 0, 0), At(1'000'000'000, std::nullopt, 95, 100));
  EXPECT_LT(p.some_fraction, 0);
  EXPECT_TRUE(p.contended());
  EXPECT_FALSE(p.ToJson().contains("psi_some_fraction"));
}

TEST(CpuPressure, ThisMachineCanBeRead) {
  CpuPressureReading r = ReadCpuPressure();
  EXPECT_GT(r.cores, 0);
  EXPECT_GT(r.all_ticks, 0u);
}

}  // namespace
}  // namespace genie::record
