// CPU steal: the share of a machine's CPU time its hypervisor gave to other guests while a run
// ran (/proc/stat's "steal"). The ranks' software waits for it, so measured times carry it and a
// model's do not; a run records it so that its reader (and genie's summary) can tell a stolen
// CPU from a slow network. Pure reads of /proc; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace genie::record {

// Cumulative ticks of the machine's "cpu" line: every kind summed (user through steal; guest
// time is already inside user), steal alone, and idle (idle + iowait: the CPUs not busy).
struct CpuTicks {
  uint64_t total = 0;
  uint64_t steal = 0;
  uint64_t idle = 0;
  uint64_t busy() const { return total - idle; }
};

// From `stat_text` (the text of /proc/stat); nullopt when it has no well-formed "cpu" line.
std::optional<CpuTicks> ParseCpuTicks(const std::string& stat_text);
// This machine's, now; nullopt where /proc/stat cannot be read.
std::optional<CpuTicks> ReadCpuTicks();

// {"steal_fraction": stolen / all ticks in between, "ticks": all ticks in between}; an empty
// object when either reading is missing or no tick passed.
nlohmann::json CpuStealJson(const std::optional<CpuTicks>& before,
                            const std::optional<CpuTicks>& after);

// Above this much steal a run's times are the CPU's as much as the network's: the summary says so
// (a healthy, quiet VM stays under 1 %; a 2-core VM under its neighbours' load read 13-29 %).
inline constexpr double kNotableStealFraction = 0.05;

}  // namespace genie::record
