// Layout: a testbed as it exists on the machine — every namespace, interface, address and link,
// with each link's rate, queue and MTU. It is computed from a TestbedSpec (a pure function:
// the same spec always gives the same names and addresses), written to the testbed's
// description file by `up`, and read back by `down`, `status`, `fault`, `genie launch
// --testbed`, `genie run` (counters) and anyone converting it to a network.yml.
//
// Names and addresses (docs/testbed.md):
//   host i            namespace NAME-hI, NIC k is ethK
//   star switch       namespace NAME-sw, bridge brK per rail k, port hInK to host i's NIC k
//   leaf l / spine s  namespaces NAME-lL / NAME-sS (routers); leaf l: bridge brK per rail with the
//                     hosts' gateway; port sS to spine s; spine s: port lL to leaf l
//   addresses         star: NIC k of host i = 10.(100+k).(i/250).(i%250+1)/16
//                     leafspine: NIC k of host j of leaf l = 10.(100+k).L.(j+1)/24, gateway .254;
//                     leaf l - spine s = 10.255.l.2s/31 (leaf) and .2s+1 (spine)
// Routed neighbours (leaf <-> spine) are permanent ARP entries on fixed MACs,
// as a fabric's routers have: a multipath route does not spread flows over a next hop whose
// neighbour was never resolved, so without them the first run would use one spine only.
// Rates are bit/s and queues bytes, as tc and NICs count them (tbf counts L2 bytes).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/config/network_config.h"
#include "genie/testbed/spec.h"

namespace genie::testbed {

struct Nic {
  std::string ifname;   // eth0
  std::string address;  // 10.100.0.1
  int prefix = 16;
  std::string link;     // the id of the link it is on
};

struct Host {
  std::string name;   // h0
  std::string netns;  // NAME-h0
  std::vector<Nic> nics;
};

struct Switch {
  std::string name;   // sw, l0, s1
  std::string netns;  // NAME-sw
  std::string role;   // "bridge" (star switch), "leaf", "spine"
};

// One end of a link: an interface in a namespace.
struct LinkEnd {
  std::string node;    // h3, sw, l0, s1
  std::string netns;
  std::string ifname;
  std::string bridge;  // the bridge the port is enslaved to ("" when routed)
  std::string address;  // routed ends only
  int prefix = 0;       // of address
  std::string mac = {};  // set at creation: 02:67:6e:<link index, 16 bits>:<0 for a, 1 for b>
};

// A full-duplex link between a and b. Direction "out" is a -> b (a's egress qdisc), "in" is
// b -> a. Host links have the host as a.
struct Link {
  std::string id;  // h3, h3:1, l0-s1
  LinkEnd a, b;
  uint64_t rate_bps = 0;
  Bytes queue_bytes = 0;  // tbf limit
  Bytes burst_bytes = 0;  // tbf burst
  int mtu = 1500;
  // Of both ends' egress (commands.h), except a host's own end: host_scheduling.
  Scheduling scheduling = Scheduling::kFifo;
  Scheduling host_scheduling = Scheduling::kFifo;  // host links: a's egress (the host's NIC)
  // A host's NIC link (a is host h<i>), not a switch-to-switch one.
  bool IsHostLink() const { return a.node.rfind('h', 0) == 0; }
  // The scheduling of `end`'s egress, `end` being a or b of this link.
  Scheduling SchedulingOf(const LinkEnd& end) const {
    return &end == &a && IsHostLink() ? host_scheduling : scheduling;
  }
};

struct Layout {
  TestbedSpec spec;
  std::vector<Host> hosts;
  std::vector<Switch> switches;
  std::vector<Link> links;

  const std::string& name() const { return spec.name; }
  // Every namespace, hosts first.
  std::vector<std::string> Namespaces() const;
  const Link* FindLink(const std::string& id) const;
  // "h3" or "3" -> host 3; nullptr when there is none.
  const Host* FindHost(const std::string& name) const;
  // The address ranks on host 0 are reached at (rendezvous).
  const std::string& RendezvousAddress() const { return hosts.at(0).nics.at(0).address; }
  // The slowest host link's rate (what every host should get alone), 0 with no host links.
  uint64_t HostLinkRate() const;
  // The hosts whose packets can leave through `end` of leaf-spine link `link`: a leaf's uplink
  // carries its own hosts' packets, a spine's port to a leaf every other leaf's hosts'.
  std::vector<const Host*> HostsSendingThrough(const Link& link, const LinkEnd& end) const;

  nlohmann::json ToJson() const;
};

// Burst and default queue that keep one TCP flow at >= 95% of `rate_bps` through tbf
// (REFERENCE §4: burst >= 256 kbit, limit >= 2 MB; a burst under 128 kB wedges tbf with GSO
// frames queued when the rate changes).
Bytes BurstFor(uint64_t rate_bps);
Bytes DefaultQueueFor(uint64_t rate_bps);
// The fixed MAC of leaf l's bridge for rail k (the hosts' gateway).
std::string GatewayMac(int leaf, int rail);

// The layout of a valid spec; per-link overrides must name existing links.
Result<Layout> LayOut(const TestbedSpec& spec);
// From the description file's JSON; `origin` names the file in errors.
Result<Layout> LayoutFromJson(const nlohmann::json& j, const std::string& origin);

// The same network as ASTRA-sim's analytical model sees it, ranks_per_host ranks on each host
// (network.yml text), ranks placed as `genie launch --testbed` does (rank i on host i mod H):
// star -> [Switch hosts] at each rank's share of its host's links; leafspine -> [Switch hosts of
// a leaf, Switch leaves] with the spine tier's bandwidth per rank; then [Switch ranks of a host]
// when there are several. Latency is
// `one_way_latency_ns` (measured by `up`). Bandwidth in GB/s of 2^30 bytes, as ASTRA-sim.
// With `goodput` and `message_overhead_ns` (a calibration, calibration.h) the testbed's
// dimensions carry them as the flow model's keys; the ranks-of-one-host dimension keeps the
// defaults.
struct MeasuredCosts {
  double goodput = 0;
  double message_overhead_ns = 0;
  // The ring steps' time per message size with every host sending ((bytes, ns), sizes
  // increasing), written as the flow model's `message_times`; empty: none.
  std::vector<std::pair<double, double>> message_times = {};
  // The links' shaper bucket (bytes; 0: none) and the first ring step per size with every
  // bucket full, written as the flow model's `burst` and `burst_message_times`.
  double burst_bytes = 0;
  std::vector<std::pair<double, double>> burst_message_times = {};
};
// `ecmp_routes` (ecmp.h, a leaf-spine with a known hash): each pair's spine, written as the
// flow model's `ecmp_routes`; without them every message is split over the spines.
// `machine_cores` (> 0): the cores of the machine the testbed's namespaces run on, which copy
// every byte the hosts send: written as `machine_bandwidth` (one loopback stream's rate per
// core). Several ranks per host also write `loopback_dimension`.
std::string ToNetworkYml(const Layout& layout, int ranks_per_host, double one_way_latency_ns,
                         const MeasuredCosts* measured = nullptr,
                         const std::vector<config::EcmpRoute>* ecmp_routes = nullptr,
                         int machine_cores = 0);

}  // namespace genie::testbed
