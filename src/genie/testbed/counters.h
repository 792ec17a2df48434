// Counters: what the testbed's kernel counted — per interface (bytes, packets, drops; the tbf
// on it: sent, dropped, overlimits, backlog) in every namespace, and per host the TCP counters
// nstat shows (TcpRetransSegs, TcpOutSegs, TcpExtTCPLostRetransmit...). `genie run` reads them
// before and after a run into the results; `genie testbed status` shows them live.
// Reads only (ip -s -j link, tc -raw -s -j qdisc, nstat -j); any thread, one Shell per thread.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/link_qdisc.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

struct InterfaceCounters {
  std::string node;  // h3, sw, l0, s1
  std::string ifname;
  std::string link;  // the testbed link it is an end of
  uint64_t rx_bytes = 0, tx_bytes = 0, rx_packets = 0, tx_packets = 0;
  uint64_t rx_dropped = 0, tx_dropped = 0;
  // The egress qdisc (tbf) on the interface.
  uint64_t qdisc_bytes = 0, qdisc_drops = 0, qdisc_overlimits = 0;
  uint64_t qdisc_backlog_bytes = 0;  // a level, not a count: deltas keep the later value
  // How that qdisc is set (kind, rate, burst, queue limit), from the same listing; an htb's
  // rate (in its classes, not listed) is the description's.
  LinkQdisc qdisc;
};

struct HostTcpCounters {
  std::string host;
  uint64_t retrans_segs = 0;  // TcpRetransSegs
  uint64_t out_segs = 0;      // TcpOutSegs
  uint64_t lost_retransmit = 0;  // TcpExtTCPLostRetransmit
  uint64_t timeouts = 0;         // TcpExtTCPTimeouts
};

struct Counters {
  std::vector<InterfaceCounters> interfaces;  // every testbed interface, hosts first
  std::vector<HostTcpCounters> hosts;

  nlohmann::json ToJson() const;
  // Every interface's qdisc settings (LinkQdisc::ToJson with its "link", "node" and "ifname").
  nlohmann::json QdiscsJson() const;
  const InterfaceCounters* Find(const std::string& node, const std::string& ifname) const;
};

Result<Counters> ReadCounters(const Layout& layout, Shell& shell);
// The switches' interfaces only (no host, no nstat): a quarter of the processes, for reading
// around every probe of a pair (driver/pair_paths.h).
Result<Counters> ReadSwitchCounters(const Layout& layout, Shell& shell);
// after - before for counts (backlog: after's level).
Counters Delta(const Counters& before, const Counters& after);

}  // namespace genie::testbed
