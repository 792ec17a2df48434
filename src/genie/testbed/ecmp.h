// Known-hash ECMP: on a leaf-spine testbed whose leaves hash on addresses only (`--hash l3`,
// fib_multipath_hash_policy=0), the spine a message takes from host a to host b depends only on
// their addresses and the leaf's namespace (its hash seed), so the leaf's kernel can be asked:
// `ip -n NAME-lL route get B from A iif br0` (a forwarding lookup, as for a packet arriving
// from the hosts' bridge) names the nexthop device sS. The answers are what the flow model's
// `ecmp_routes` key takes (config/network_config.h), so a prediction routes each pair on the
// spine the testbed does. With `--hash l4` the spine depends on the ports of each connection,
// known once the run's ranks have connected: each rank records its connections' addresses and
// ports (net/transport.h ConnectionEndpoints), and the leaf is asked per connection and
// direction, `route get B from A iif br0 ipproto tcp sport S dport D` (the flow model's
// `ecmp_connections`). Pure but for the Shell; main thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/config/network_config.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// Whether `layout`'s spines are known per pair: a leaf-spine with hash l3, more than one spine,
// one NIC per host (the hosts' rail 0; several rails would each hash their own addresses).
bool EcmpKnown(const Layout& layout);

// Every ordered pair of hosts on different leaves with the spine its leaf sends it to, as the
// leaves' kernels answer (one `ip -batch` per leaf); hosts numbered as in the description (host
// i = rank i mod hosts under `genie launch --testbed`). Empty when !EcmpKnown(layout). Fails,
// naming the leaf and the pair, when a leaf does not answer (the testbed is down, not root).
Result<std::vector<config::EcmpRoute>> QueryEcmpRoutes(const Layout& layout, Shell& shell);

// Whether `layout`'s spines are known per connection once its ports are: a leaf-spine with hash
// l4, more than one spine, one NIC per host.
bool EcmpPerConnection(const Layout& layout);

// One direction of one TCP connection of a run: rank `src`'s messages to rank `dst` on
// `channel`, sent from `local` to `remote` ("10.100.0.1:40312", as the rank recorded them).
struct ConnectionFlow {
  int src = 0, dst = 0;
  int channel = 0;
  std::string local, remote;
};

// The spine of every flow of `flows` between hosts on different leaves, as the source's leaf
// answers for its 5-tuple (one `ip -batch` per leaf), keyed by (src, dst, channel) as given;
// flows within a leaf, or from or to an address that is no host's, are left out. Empty when
// !EcmpPerConnection(layout). Fails, naming the leaf and a connection, when a leaf does not
// answer for every flow it was asked, or an address is not "ip:port".
Result<std::vector<config::EcmpConnection>> QueryConnectionSpines(
    const Layout& layout, const std::vector<ConnectionFlow>& flows, Shell& shell);

// The spine of one `ip route get` answer ("10.100.1.1 from 10.100.0.1 via 10.255.0.3 dev s1"):
// the N of its `dev sN`, -1 when there is none.
int SpineOfRouteGet(const std::string& line);

}  // namespace genie::testbed
