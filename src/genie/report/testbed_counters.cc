#include "genie/report/testbed_counters.h"

#include "genie/record/json_check.h"

namespace genie::report {

std::map<std::string, HostCounters> TestbedHostCounters(const nlohmann::json& testbed) {
  std::map<std::string, HostCounters> hosts;
  if (!testbed.is_object() || !testbed.contains("counters")) return hosts;
  const nlohmann::json& counters = testbed["counters"];
  if (!counters.is_object()) return hosts;
  if (counters.contains("interfaces") && counters["interfaces"].is_array()) {
    for (const auto& c : counters["interfaces"]) {
      if (!c.is_object()) continue;
      const std::string node = c.value("node", "");
      if (node.empty() || node[0] != 'h') continue;  // the host's own NICs
      HostCounters& r = hosts[node];
      r.tx_bytes += record::UintField(c, "tx_bytes", 0);
      r.rx_bytes += record::UintField(c, "rx_bytes", 0);
    }
    // Drops on a host's link, either end (the switch port's queue is the link's other way).
    for (const auto& c : counters["interfaces"]) {
      if (!c.is_object()) continue;
      std::string link = c.value("link", "");
      link = link.substr(0, link.find(':'));
      auto it = hosts.find(link);
      if (it != hosts.end()) it->second.drops += record::UintField(c, "qdisc_drops", 0);
    }
  }
  if (counters.contains("hosts") && counters["hosts"].is_array()) {
    for (const auto& h : counters["hosts"]) {
      if (!h.is_object()) continue;
      HostCounters& r = hosts[h.value("host", "?")];
      r.retrans = record::UintField(h, "tcp_retrans_segs", 0);
      r.out_segs = record::UintField(h, "tcp_out_segs", 0);
      r.timeouts = record::UintField(h, "tcp_timeouts", 0);
    }
  }
  return hosts;
}

}  // namespace genie::report
