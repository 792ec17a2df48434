// Units genie speaks: byte counts and durations, parsed from the command line and configs and
// printed for people. Time is always integer nanoseconds (TimeNs), as in ASTRA-sim where one
// "cycle" is one ns. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "genie/common/status.h"

namespace genie {

using TimeNs = int64_t;  // a point or span of time in nanoseconds (virtual or wall clock)
using Bytes = uint64_t;

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerSec = 1'000'000'000;

// "1048576", "1MiB", "1M" (binary, as nccl-tests' -b/-e), "4KiB", "1MB" (decimal: 10^6), "2G".
Result<Bytes> ParseBytes(std::string_view text);
// "30s", "3s", "500ms", "100us", "250ns", "1.5s"; a bare number is seconds.
Result<TimeNs> ParseDuration(std::string_view text);

// A share of something: "10%", "0.5 %", "0.1" (a bare number is the fraction itself).
Result<double> ParseFraction(std::string_view text);

// A link rate in bit/s, as tc and NICs write it: "1gbit", "400mbit", "100Mbit/s", "2.5Gbps",
// "1000000" (bit/s); k/m/g/t are powers of 10.
Result<uint64_t> ParseBitRate(std::string_view text);
// 400000000 -> "400mbit" (tc's own spelling, exact when it can be).
std::string FormatBitRate(uint64_t bits_per_second);

// 1048576 -> "1 MiB", 1536 -> "1.5 KiB", 7 -> "7 B".
std::string FormatBytes(Bytes bytes);
// 1234567 -> "1.235 ms".
std::string FormatDuration(TimeNs ns);

}  // namespace genie
