#include "genie/record/cpu_pressure.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "genie/common/usable_cores.h"
#include "genie/record/cpu_steal.h"

namespace genie::record {
namespace {

std::string Slurp(const char* path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<uint64_t> ParsePsiSomeTotal(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const auto at = line.find("total=");
    if (at == std::string::npos) return std::nullopt;
    try {
      return std::stoull(line.substr(at + 6));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

CpuPressureReading ReadCpuPressure() {
  CpuPressureReading r;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  r.at_ns = static_cast<TimeNs>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  r.some_us = ParsePsiSomeTotal(Slurp("/proc/pressure/cpu"));
  if (const auto ticks = ReadCpuTicks()) {
    r.busy_ticks = ticks->busy();
    r.all_ticks = ticks->total;
  }
  r.cores = UsableCores();
  return r;
}

CpuPressure PressureBetween(const CpuPressureReading& a, const CpuPressureReading& b) {
  CpuPressure p;
  p.cores = b.cores;
  p.wall_ns = b.at_ns - a.at_ns;
  if (p.wall_ns > 0 && a.some_us && b.some_us && *b.some_us >= *a.some_us) {
    p.some_fraction =
        std::min(1.0, static_cast<double>(*b.some_us - *a.some_us) * 1e3 / p.wall_ns);
  }
  if (b.all_ticks > a.all_ticks && b.busy_ticks >= a.busy_ticks) {
    p.busy_fraction = static_cast<double>(b.busy_ticks - a.busy_ticks) /
                      static_cast<double>(b.all_ticks - a.all_ticks);
  }
  return p;
}

bool CpuPressure::contended() const {
  if (some_fraction >= 0) return some_fraction > kContendedSomeFraction;
  return busy_fraction > kContendedBusyFraction;
}

std::string CpuPressure::Describe() const {
  std::string out;
  if (some_fraction >= 0) {
    out = fmt::format("some task waited for a core {:.0f} % of the {:.1f} s, ", 100 * some_fraction,
                      wall_ns / 1e9);
  }
  return out + fmt::format("CPUs {:.0f} % busy ({} cores)", 100 * busy_fraction, cores);
}

nlohmann::json CpuPressure::ToJson() const {
  nlohmann::json j = {{"busy_fraction", busy_fraction}, {"cores", cores}, {"wall_ns", wall_ns},
                      {"contended", contended()}};
  if (some_fraction >= 0) j["psi_some_fraction"] = some_fraction;
  return j;
}

}  // namespace genie::record
