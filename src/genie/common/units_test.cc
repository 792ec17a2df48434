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

TEST(Units, Formats) {
  EXPECT_EQ(FormatBytes(1048576), "1 MiB");
  EXPECT_EQ(FormatBytes(7), "7 B");
  EXPECT_EQ(FormatDuration(1500), "1.500 us");
}

}  // namespace
}  // namespace genie
