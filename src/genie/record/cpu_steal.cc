#include "genie/record/cpu_steal.h"

#include <fstream>
#include <sstream>

namespace genie::record {

std::optional<CpuTicks> ParseCpuTicks(const std::string& stat_text) {
  std::istringstream lines(stat_text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("cpu ", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    uint64_t v[8];
    for (auto& x : v) {
      if (!(fields >> x)) return std::nullopt;
    }
    CpuTicks t;
    for (uint64_t x : v) t.total += x;
    t.steal = v[7];
    t.idle = v[3] + v[4];
    return t;
  }
  return std::nullopt;
}

std::optional<CpuTicks> ReadCpuTicks() {
  std::ifstream in("/proc/stat");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseCpuTicks(text.str());
}

nlohmann::json CpuStealJson(const std::optional<CpuTicks>& before,
                            const std::optional<CpuTicks>& after) {
  if (!before || !after || after->total <= before->total || after->steal < before->steal) {
    return nlohmann::json::object();
  }
  const uint64_t ticks = after->total - before->total;
  return {{"steal_fraction", static_cast<double>(after->steal - before->steal) / static_cast<double>(ticks)},
          {"ticks", ticks}};
}

}  // namespace genie::record
