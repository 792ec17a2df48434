#include "genie/common/checked_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace genie {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedMath, AddAndMulSayWhenTheResultDoesNotFit) {
  EXPECT_EQ(CheckedAdd(int64_t{40}, int64_t{2}), 42);
  EXPECT_EQ(CheckedAdd(kMaxTimeNs - 1, int64_t{1}), kMaxTimeNs);
  EXPECT_FALSE(CheckedAdd(kMaxTimeNs, int64_t{1}).has_value());
  EXPECT_FALSE(CheckedAdd(kMin, int64_t{-1}).has_value());
  EXPECT_EQ(CheckedMul(int64_t{3}, int64_t{-7}), -21);
  EXPECT_FALSE(CheckedMul(int64_t{1} << 32, int64_t{1} << 31).has_value());
  EXPECT_EQ(CheckedAdd(kMaxBytes - 5, uint64_t{5}), kMaxBytes);
  EXPECT_FALSE(CheckedAdd(kMaxBytes, uint64_t{1}).has_value());
  EXPECT_FALSE(CheckedMul(uint64_t{1} << 40, uint64_t{1} << 24).has_value());
  EXPECT_EQ(CheckedMul(uint64_t{1} << 40, uint64_t{1} << 23), uint64_t{1} << 63);
}

TEST(CheckedMath, SaturatingClampsAtTheEndTheTrueResultLiesBeyond) {
  EXPECT_EQ(SaturatingAdd(kMaxTimeNs, int64_t{1}), kMaxTimeNs);
  EXPECT_EQ(SaturatingAdd(kMin, int64_t{-1}), kMin);
  EXPECT_EQ(SaturatingAdd(int64_t{-5}, int64_t{3}), -2);
  EXPECT_EQ(SaturatingMul(int64_t{1} << 40, int64_t{1} << 40), kMaxTimeNs);
  EXPECT_EQ(SaturatingMul(-(int64_t{1} << 40), int64_t{1} << 40), kMin);
  EXPECT_EQ(SaturatingMul(-(int64_t{1} << 40), -(int64_t{1} << 40)), kMaxTimeNs);
  EXPECT_EQ(SaturatingAdd(kMaxBytes, uint64_t{1}), kMaxBytes);
  EXPECT_EQ(SaturatingMul(kMaxBytes, uint64_t{2}), kMaxBytes);
}

TEST(CheckedMath, DoubleToTimeNsTruncatesLikeACastAndRefusesWhatDoesNotFit) {
  EXPECT_EQ(TimeNsFromDouble(1110.99), 1110);
  EXPECT_EQ(TimeNsFromDouble(-0.5), 0);
  EXPECT_EQ(TimeNsFromDouble(0x1p62), int64_t{1} << 62);
  EXPECT_EQ(TimeNsFromDouble(-0x1p63), kMin);
  EXPECT_FALSE(TimeNsFromDouble(0x1p63).has_value());  // exactly 2^63: one past the top
  EXPECT_FALSE(TimeNsFromDouble(1e30).has_value());
  EXPECT_FALSE(TimeNsFromDouble(-1e30).has_value());
  EXPECT_FALSE(TimeNsFromDouble(std::nan("")).has_value());
  EXPECT_FALSE(TimeNsFromDouble(std::numeric_limits<double>::infinity()).has_value());
  // A 1-byte message on a 1e-300 GB/s link, the tester's input.
  EXPECT_FALSE(TimeNsFromDouble(1.0 / (1e-300 * 1.073741824)).has_value());
  EXPECT_EQ(SaturatingTimeNs(1e30), kMaxTimeNs);
  EXPECT_EQ(SaturatingTimeNs(std::nan("")), kMaxTimeNs);
  EXPECT_EQ(SaturatingTimeNs(-1e30), kMin);
  EXPECT_EQ(SaturatingTimeNs(20.48), 20);
}

}  // namespace
}  // namespace genie
