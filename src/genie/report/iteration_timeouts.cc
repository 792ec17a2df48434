#include "genie/report/iteration_timeouts.h"

#include <fmt/format.h>

#include <algorithm>

namespace genie::report {

std::map<int, IterationTimeouts> TimeoutsPerIteration(
    const std::vector<record::RankSummary>& ranks) {
  // iteration -> host -> (lowest rank, most counted): ranks of one host read one counter at
  // slightly different times; the largest reading covers the others. A rank that could not tell
  // its host (host_id 0) is a host of its own.
  std::map<int, std::map<int64_t, std::pair<int, int64_t>>> hosts;
  for (const auto& s : ranks) {
    if (s.iteration < 0 || s.tcp_timeouts <= 0) continue;
    const int64_t host = s.host_id != 0 ? s.host_id : -1 - int64_t{s.rank};
    auto [it, added] = hosts[s.iteration].try_emplace(host, s.rank, s.tcp_timeouts);
    if (!added) {
      it->second.first = std::min(it->second.first, s.rank);
      it->second.second = std::max(it->second.second, s.tcp_timeouts);
    }
  }
  std::map<int, IterationTimeouts> out;
  for (const auto& [iteration, of_host] : hosts) {
    IterationTimeouts& t = out[iteration];
    for (const auto& [host, h] : of_host) {
      t.total += h.second;
      t.by_host.push_back(h);
    }
    std::sort(t.by_host.begin(), t.by_host.end());
  }
  return out;
}

std::string DescribeTimeouts(const IterationTimeouts& t) {
  std::string where;
  for (size_t i = 0; i < t.by_host.size(); ++i) {
    where += fmt::format("{}{} on rank {}'s{}", i ? ", " : "", t.by_host[i].second,
                         t.by_host[i].first, i ? "" : " host");
  }
  return fmt::format(
      "{} TCP retransmission timeout(s) in this iteration ({}), each a stall of 200 ms or more",
      t.total, where);
}

}  // namespace genie::report
