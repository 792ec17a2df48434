#include "genie/report/iteration_probe_rtt.h"

#include <fmt/format.h>

#include <algorithm>

#include "genie/common/units.h"

namespace genie::report {

std::map<int, IterationProbeRtt> ProbeRttPerIteration(
    const std::vector<record::RankSummary>& ranks) {
  std::map<int, IterationProbeRtt> out;
  for (const auto& s : ranks) {
    if (s.iteration < 0 || s.probe_rtt_episodes <= 0) continue;
    IterationProbeRtt& p = out[s.iteration];
    p.episodes += s.probe_rtt_episodes;
    p.ns += s.probe_rtt_ns;
    p.ranks.push_back(s.rank);
  }
  for (auto& [iteration, p] : out) {
    std::sort(p.ranks.begin(), p.ranks.end());
    p.ranks.erase(std::unique(p.ranks.begin(), p.ranks.end()), p.ranks.end());
  }
  return out;
}

std::string DescribeProbeRtt(const IterationProbeRtt& p) {
  std::string who;
  for (size_t i = 0; i < p.ranks.size();) {
    size_t j = i;
    while (j + 1 < p.ranks.size() && p.ranks[j + 1] == p.ranks[j] + 1) ++j;
    who += fmt::format("{}{}", who.empty() ? "" : ",",
                       j == i ? std::to_string(p.ranks[i])
                              : fmt::format("{}-{}", p.ranks[i], p.ranks[j]));
    i = j + 1;
  }
  return fmt::format(
      "bbr's PROBE_RTT: {} connection(s) of rank{} {} held 4 packets in flight for {} each on "
      "average in this iteration (bbr does so every ~10 s of a connection's life, its "
      "connections together: the transport's own cost, not a fault)",
      p.episodes, p.ranks.size() == 1 ? "" : "s", who,
      FormatDuration(p.episodes > 0 ? p.ns / p.episodes : 0));
}

}  // namespace genie::report
