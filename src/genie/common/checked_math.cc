#include "genie/common/checked_math.h"

#include <cmath>

namespace genie {
namespace {

// int64's range as doubles: [-2^63, 2^63). 2^63 itself is exactly representable as a double
// but not as an int64, so the top bound is exclusive.
constexpr double kTwoTo63 = 9223372036854775808.0;

}  // namespace

std::optional<TimeNs> TimeNsFromDouble(double ns) {
  if (!(ns >= -kTwoTo63 && ns < kTwoTo63)) return std::nullopt;  // also NaN
  return static_cast<TimeNs>(ns);
}

TimeNs SaturatingTimeNs(double ns) {
  if (auto t = TimeNsFromDouble(ns)) return *t;
  return ns < 0 ? std::numeric_limits<TimeNs>::min() : kMaxTimeNs;
}

}  // namespace genie
