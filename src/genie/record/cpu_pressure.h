// CPU pressure: how contended this machine's CPUs were between two readings — the share of the
// time some runnable task waited for a core (the kernel's pressure stall information,
// /proc/pressure/cpu "some") and the share of CPU time busy (/proc/stat). What a measurement
// that ran many ranks on few cores (a `genie testbed calibrate`, a doctor scan) reports beside
// its figures, so a slow pair measured while the CPUs were saturated is read as the CPU's, not
// the link's. Reads of /proc; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "genie/common/units.h"

namespace genie::record {

struct CpuPressureReading {
  TimeNs at_ns = 0;                    // CLOCK_MONOTONIC
  std::optional<uint64_t> some_us;     // PSI "some" total stall, µs (none without CONFIG_PSI)
  uint64_t busy_ticks = 0, all_ticks = 0;
  int cores = 0;                       // CPUs this process may run on
};

struct CpuPressure {
  double some_fraction = -1;  // of the wall time some task waited for a core; -1: unknown
  double busy_fraction = 0;   // of all CPU time, busy
  int cores = 0;
  TimeNs wall_ns = 0;
  // Contended: tasks waited for a core more than kContendedSomeFraction of the time (or, without
  // PSI, the CPUs were busy more than kContendedBusyFraction of it).
  bool contended() const;
  std::string Describe() const;  // "some task waited for a core 87 % of the 24.1 s, CPUs 96 % busy (2 cores)"
  nlohmann::json ToJson() const;
};

// A star:8 calibration on an idle 2-core machine: PSI some 20-30 %, CPUs under 50 % busy (its
// ranks mostly wait on the shaped links); with four busy loops beside it: 87-95 %, ~100 %.
inline constexpr double kContendedSomeFraction = 0.6;
inline constexpr double kContendedBusyFraction = 0.9;

// Parses /proc/pressure/cpu's text: the "some" line's total (µs).
std::optional<uint64_t> ParsePsiSomeTotal(const std::string& text);
CpuPressureReading ReadCpuPressure();
CpuPressure PressureBetween(const CpuPressureReading& before, const CpuPressureReading& after);

}  // namespace genie::record
