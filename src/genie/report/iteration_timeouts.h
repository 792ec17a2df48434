// Retransmission timeouts per iteration: how many TCP RTOs the run's hosts counted during each
// measured iteration (RankSummary::tcp_timeouts, record/tcp_timeouts.h), each host counted once
// however many of its ranks read its counter (they share its host_id). Each RTO
// stalls a connection for tcp_rto_min (200 ms) or more, and the flow model has no losses, so an
// iteration with timeouts is one its prediction cannot hold: the comparison marks it and the
// attribution gives them as the network's evidence. Pure; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "genie/record/rank_summary.h"

namespace genie::report {

struct IterationTimeouts {
  int64_t total = 0;
  // Per host that counted some: (the lowest rank on it, its count), by rank.
  std::vector<std::pair<int, int64_t>> by_host;
};

// Measured iterations with at least one timeout (warm-ups skipped).
std::map<int, IterationTimeouts> TimeoutsPerIteration(
    const std::vector<record::RankSummary>& ranks);

// "3 TCP retransmission timeout(s) in this iteration (2 on rank 1's host, 1 on rank 6's),
// each a stall of 200 ms or more".
std::string DescribeTimeouts(const IterationTimeouts& t);

}  // namespace genie::report
