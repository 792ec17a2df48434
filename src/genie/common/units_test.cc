#include "genie/common/units.h"

#include <gtest/gtest.h>

namespace genie {
namespace {

TEST(Units, ParsesBytes) {
  EXPECT_EQ(ParseBytes("1048576").value(), 1048576u);
  EXPECT_EQ(ParseBytes("1MiB").value(), 1048576u);
  EXPECT_EQ(ParseBytes("1M").value(), 1048576u);
  EXPECT_EQ(ParseBytes("64K").value(), 65536u);
  EXPECT_EQ(ParseBytes("1MB").value(), 1000000u);
  EXPECT_EQ(ParseBytes("1.5KiB").value(), 1536u);
  EXPECT_FALSE(ParseBytes("lots").ok());
  EXPECT_FALSE(ParseBytes("1.3B").ok());
  EXPECT_FALSE(ParseBytes("3XB").ok());
}

TEST(Units, ParsesDurations) {
  EXPECT_EQ(ParseDuration("3s").value(), 3 * kNsPerSec);
  EXPECT_EQ(ParseDuration("500ms").value(), 500 * kNsPerMs);
  EXPECT_EQ(ParseDuration("100us").value(), 100 * kNsPerUs);
  EXPECT_EQ(ParseDuration("7").value(), 7 * kNsPerSec);
  EXPECT_FALSE(ParseDuration("3 fortnights").ok());
}

TEST(Units, ParsesFractions) {
  EXPECT_DOUBLE_EQ(*ParseFraction("10%"), 0.1);
  EXPECT_DOUBLE_EQ(*ParseFraction("0.5 %"), 0.005);
  EXPECT_DOUBLE_EQ(*ParseFraction("0.25"), 0.25);
  for (const char* bad : {"", "%", "ten%", "1/2", "0.1x"}) {
    auto r = ParseFraction(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("is not a fraction"), std::string::npos) << bad;
  }
}

TEST(Units, Formats) {
  EXPECT_EQ(FormatBytes(1048576), "1 MiB");
  EXPECT_EQ(FormatBytes(7), "7 B");
  EXPECT_EQ(FormatDuration(1500), "1.500 us");
}

}  // namespace
}  // namespace genie

namespace genie {
namespace {

TEST(BitRate, ParsesTcAndNicSpellings) {
  EXPECT_EQ(*ParseBitRate("1gbit"), 1'000'000'000u);
  EXPECT_EQ(*ParseBitRate("400mbit"), 400'000'000u);
  EXPECT_EQ(*ParseBitRate("100Mbit/s"), 100'000'000u);
  EXPECT_EQ(*ParseBitRate("2.5Gbps"), 2'500'000'000u);
  EXPECT_EQ(*ParseBitRate("64000"), 64'000u);
  EXPECT_FALSE(ParseBitRate("1GB").ok());  // bytes are not a rate: say bits
  EXPECT_FALSE(ParseBitRate("fast").ok());
  EXPECT_FALSE(ParseBitRate("0mbit").ok());
}

TEST(BitRate, FormatsAsTcWritesIt) {
  EXPECT_EQ(FormatBitRate(1'000'000'000), "1gbit");
  EXPECT_EQ(FormatBitRate(400'000'000), "400mbit");
  EXPECT_EQ(FormatBitRate(1'500'000), "1500kbit");
  EXPECT_EQ(FormatBitRate(999), "999bit");
}

}  // namespace
}  // namespace genie
