// Known-hash ECMP: on a leaf-spine testbed whose leaves hash on addresses only (`--hash l3`,
// fib_multipath_hash_policy=0), the spine a message takes from host a to host b depends only on
// their addresses and the leaf's namespace (its hash seed), so the leaf's kernel can be asked:
// `ip -n NAME-lL route get B from A iif br0` (a forwarding lookup, as for a packet arriving
// from the hosts' bridge) names the nexthop device sS. The answers are what the flow model's
// `ecmp_routes` key takes (config/network_config.h), so a prediction routes each pair on the
// spine the testbed does. With `--hash l4` the spine depends on the ports of each connection
// and is not known in advance: no routes, the model splits. Pure but for the Shell; main thread.
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

// The spine of one `ip route get` answer ("10.100.1.1 from 10.100.0.1 via 10.255.0.3 dev s1"):
// the N of its `dev sN`, -1 when there is none.
int SpineOfRouteGet(const std::string& line);

}  // namespace genie::testbed
