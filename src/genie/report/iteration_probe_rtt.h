// bbr's PROBE_RTT per iteration: how many of the run's busy connections entered it during each
// measured iteration and how long they spent in it (RankSummary::probe_rtt_episodes and
// probe_rtt_ns, net/tcp/probe_rtt_watch.h; each rank reports the sockets it sends on, so a
// connection's direction counts once). bbr holds a connection to 4 packets in flight for ~200 ms
// every ~10 s of its life, together with the connections opened with it, and the prediction
// places them where they were (driver/run_results.cc): an iteration that spans one is slower
// with no fault anywhere. The comparison marks it and the attribution gives it as the
// network's evidence — the transport's own, not a link's. Pure; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

struct IterationProbeRtt {
  int64_t episodes = 0;  // connections (one direction each) that entered PROBE_RTT
  TimeNs ns = 0;         // their time in it, summed
  std::vector<int> ranks;  // the ranks whose connections did, ascending
};

// Measured iterations with at least one episode (warm-ups skipped).
std::map<int, IterationProbeRtt> ProbeRttPerIteration(
    const std::vector<record::RankSummary>& ranks);

// "bbr's PROBE_RTT: 16 connection(s) of ranks 0-7 held 4 packets in flight for 190 ms each on
// average in this iteration (bbr does so every ~10 s: the transport's own cost, not a fault)".
std::string DescribeProbeRtt(const IterationProbeRtt& p);

}  // namespace genie::report
