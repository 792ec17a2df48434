// Checked and saturating arithmetic for simulated time (TimeNs, int64 ns) and sizes (Bytes,
// uint64). Extreme but well-formed inputs (a 1e-300 GB/s link, a 1e30 ns latency, a 2^60-byte
// collective on a slow link) produce durations past what int64 ns can hold (about 292 years).
// A plain `static_cast<TimeNs>(double)` of such a value is undefined behaviour and a plain
// `now + delay` wraps negative; these helpers either say "does not fit" (Checked*, returning
// nullopt) or clamp to the largest value (Saturating*), so that the one place where time moves
// forward (sim::EventQueue) can refuse the event with an error naming the input.
// Pure functions; any thread.
#pragma once

#include <cstdint>
#include <concepts>
#include <limits>
#include <optional>

#include "genie/common/units.h"

namespace genie {

// The last representable instant; a duration or time that reaches it has overflowed.
inline constexpr TimeNs kMaxTimeNs = std::numeric_limits<TimeNs>::max();
inline constexpr Bytes kMaxBytes = std::numeric_limits<Bytes>::max();

// a + b and a * b, or nullopt when the exact result does not fit (int64_t or uint64_t).
template <std::integral T>
std::optional<T> CheckedAdd(T a, T b) {
  T r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
template <std::integral T>
std::optional<T> CheckedMul(T a, T b) {
  T r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Same, clamped to the type's range (the sign of the true result picks the end).
inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (auto r = CheckedAdd(a, b)) return *r;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}
inline int64_t SaturatingMul(int64_t a, int64_t b) {
  if (auto r = CheckedMul(a, b)) return *r;
  return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                            : std::numeric_limits<int64_t>::max();
}
inline uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return CheckedAdd(a, b).value_or(std::numeric_limits<uint64_t>::max());
}
inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return CheckedMul(a, b).value_or(std::numeric_limits<uint64_t>::max());
}

// A duration in ns computed in floating point, truncated toward zero as a C cast does (the
// rounding ASTRA-sim's formulas rely on), or nullopt when it is NaN or outside int64.
// Inline: the simulator prices every message with two of these.
inline std::optional<TimeNs> TimeNsFromDouble(double ns) {
  // int64's range as doubles: [-2^63, 2^63). 2^63 itself is exactly representable as a double
  // but not as an int64, so the top bound is exclusive.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (!(ns >= -kTwoTo63 && ns < kTwoTo63)) return std::nullopt;  // also NaN
  return static_cast<TimeNs>(ns);
}
// Same, but NaN and values past the top clamp to kMaxTimeNs (below the bottom: the minimum):
// for costs that are then scheduled, where kMaxTimeNs itself is refused as an overflow.
inline TimeNs SaturatingTimeNs(double ns) {
  if (auto t = TimeNsFromDouble(ns)) return *t;
  return ns < 0 ? std::numeric_limits<TimeNs>::min() : kMaxTimeNs;
}

}  // namespace genie
