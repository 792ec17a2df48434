// Testbed counters per host: what a run's `provenance.testbed.counters` (written by rank 0 on a
// genie testbed) says each host's NICs sent and received, the tbf drops on its link (either end)
// and its TCP segments, retransmissions and retransmission timeouts (RTOs) during the run. One
// reading shared by the terminal summary (summary.h) and the HTML report (html/page_model.h), so
// both show the same numbers. Pure; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace genie::report {

struct HostCounters {
  uint64_t tx_bytes = 0, rx_bytes = 0, drops = 0, retrans = 0, out_segs = 0;
  // RTOs: each stalls its connection for at least the kernel's tcp_rto_min (200 ms).
  uint64_t timeouts = 0;
};

// Keyed by host name ("h0", ...), in name order; empty when `testbed` has no counters.
std::map<std::string, HostCounters> TestbedHostCounters(const nlohmann::json& testbed);

}  // namespace genie::report
