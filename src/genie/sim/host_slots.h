// Host slots: several ranks on one host of a network whose NPUs are hosts, as a jobs spec places
// the ranks of several jobs (docs/simulation.md, "Several jobs on one network"). The network
// gets a Switch dimension of `slots` appended, so NPU = host + hosts x slot (the hosts vary
// fastest, as `genie launch --testbed` numbers them), and the ranks of one host talk through it
// (a host's loopback: config::kHostLoopbackGbps, as testbed/layout.cc writes it); and
// every slot of a host sends and receives on the host's own links: slot k's links of the hosts'
// dimensions are folded onto slot 0's (Topology::set_link_fold), so the flow model shares a
// host's links max-min among all the ranks on it, whatever job they belong to.
// Pure functions; any thread.
#pragma once

#include <vector>

#include "genie/config/network_config.h"
#include "genie/sim/topology.h"

namespace genie::sim {

// `hosts` (one NPU per host) with `slots` ranks per host; slots <= 1: `hosts` unchanged. The
// appended dimension is the network's `loopback_dimension` (config::kHostLoopbackGbps and
// latency); `hosts`' machine_bandwidth, if any, is kept.
config::NetworkConfig WithHostSlots(const config::NetworkConfig& hosts, int slots);

// For `topology` built from WithHostSlots(h, slots) with `hosts` = h.total_npus(): every link
// of the hosts' dimensions (all but the last) of slot k's NPUs mapped to slot 0's; every other
// link (the loopback's, a leaf-spine's spine links, already per leaf) to itself.
std::vector<int> HostSlotLinkFold(const Topology& topology, int hosts);

}  // namespace genie::sim
