// LinkQdisc: how a testbed link end's egress is set, as tc reports it — the root qdisc's kind
// (tbf: one FIFO, or a host's ACK and bulk FIFOs behind it; htb: the per-sending-host classes of
// a leaf-spine link, each with its bfifo),
// its rate, burst and queue limit. Read from the same `tc -raw -s -j qdisc show` the counters
// take (counters.h), so a run records the queues it ran through at no extra command; results.json's
// network_settings lists them (report/network_settings.h). Pure; any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace genie::testbed {

struct LinkQdisc {
  std::string kind;          // the root qdisc: "tbf", "htb", ...; "" when tc listed none
  uint64_t rate_bps = 0;     // tbf's rate; htb's classes are not in the qdisc listing (0)
  uint64_t burst_bytes = 0;  // tbf's bucket
  uint64_t limit_bytes = 0;  // tbf's queue limit; with bfifo leaves, the largest of theirs
  int queues = 0;            // FIFOs behind the root: 1 for a plain tbf, else its bfifo leaves
  // How the end serves its FIFOs, from the testbed's layout (spec.h Scheduling): "fifo",
  // "per-host" or "ack-first"; "" when recorded before the field (an htb was then per-host).
  std::string scheduling;
  nlohmann::json ToJson() const;
  static LinkQdisc FromJson(const nlohmann::json& j);
};

// `qdiscs`: a namespace's `tc -raw -j qdisc show` (every device, each entry naming its "dev");
// the root qdisc of `ifname` and the leaves under it. Without -raw tc gives tbf's limit as a
// latency ("lat", µs), which is converted back. A text that is not tc's JSON gives an empty kind.
LinkQdisc QdiscFromTcJson(const nlohmann::json& qdiscs, const std::string& ifname);

}  // namespace genie::testbed
