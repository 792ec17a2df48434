#include "genie/testbed/commands.h"

#include <algorithm>

#include <fmt/format.h>

namespace genie::testbed {

namespace {

Argv Ip(const std::string& ns, std::initializer_list<std::string> rest) {
  Argv a = {"ip", "-n", ns};
  a.insert(a.end(), rest.begin(), rest.end());
  return a;
}

Argv Sysctl(const std::string& ns, const std::string& setting) {
  return InNamespace(ns, {"sysctl", "-q", "-w", setting});
}

}  // namespace

std::vector<Argv> ShapeCommands(const Layout& layout, const Link& link, const LinkEnd& end,
                                uint64_t rate_bps, Bytes burst_bytes, Bytes queue_bytes,
                                ShapeStep step) {
  const std::string rate = std::to_string(rate_bps) + "bit", burst = std::to_string(burst_bytes),
                    queue = std::to_string(queue_bytes);
  auto tc = [&](std::initializer_list<std::string> rest) {
    Argv a = {"tc", "-n", end.netns};
    a.insert(a.end(), rest.begin(), rest.end());
    return a;
  };
  const Scheduling scheduling = link.SchedulingOf(end);
  const Argv tbf = tc({"qdisc", "replace", "dev", end.ifname, "root", "tbf", "rate", rate, "burst",
                       burst, "limit", queue});
  if (scheduling == Scheduling::kFifo) return {tbf};
  // A DRR quantum of a full GSO frame (veth hands htb up to 64 KiB at once) keeps the
  // round-robin fair per byte without htb's "quantum is big" warning.
  const std::string quantum = "65536";
  std::vector<Argv> cmds;
  if (scheduling == Scheduling::kAckFirst) {
    // tbf holds the rate, as for fifo (so status, faults and results read it the same way); the
    // htb inside it only orders: its two classes may send far above any link rate (100 Gbit/s
    // is the most a spec allows) with the link's burst (htb's own at that rate would be 0), so
    // they are never throttled and htb serves the prio-0 class whenever it has a packet (an ACK
    // can still wait out the one bulk frame tbf holds until it has the tokens). That class takes
    // TCP packets under 128 bytes: a pure ACK is at most 80 (40 bytes of options), and SYNs,
    // FINs and data of a few dozen bytes go with them, as a sparse flow's would under fq.
    // tbf's limit does not reach an inner htb, so each class's bfifo holds the queue.
    const std::string unlimited = "100gbit";
    if (step == ShapeStep::kBuild) {
      cmds.push_back(tc({"qdisc", "replace", "dev", end.ifname, "root", "handle", "1:", "tbf", "rate",
                         rate, "burst", burst, "limit", queue}));
      cmds.push_back(tc({"qdisc", "replace", "dev", end.ifname, "parent", "1:1", "handle", "2:",
                         "htb", "default", "20"}));
      for (const auto& [id, prio] : {std::pair<std::string, std::string>{"10", "0"}, {"20", "1"}}) {
        cmds.push_back(tc({"class", "replace", "dev", end.ifname, "parent", "2:", "classid",
                           "2:" + id, "htb", "prio", prio, "rate", unlimited, "ceil", unlimited,
                           "burst", burst, "cburst", burst, "quantum", quantum}));
      }
      cmds.push_back(tc({"filter", "add", "dev", end.ifname, "parent", "2:", "protocol", "ip",
                         "prio", "1", "u32", "match", "ip", "protocol", "6", "0xff", "match", "u16",
                         "0x0000", "0xff80", "at", "2", "flowid", "2:10"}));
    } else {
      cmds.push_back(tbf);
    }
    for (const std::string id : {"10", "20"}) {
      cmds.push_back(tc({"qdisc", "replace", "dev", end.ifname, "parent", "2:" + id, "handle",
                         id + ":", "bfifo", "limit", queue}));
    }
    return cmds;
  }
  const std::vector<const Host*> senders = layout.HostsSendingThrough(link, end);
  // Equal guarantees that add up to the rate; the last class (1:2) takes what no filter matches.
  const std::string share = std::to_string(std::max<uint64_t>(rate_bps / (senders.size() + 1), 8)) + "bit";
  if (step == ShapeStep::kBuild) {
    cmds.push_back(tc({"qdisc", "replace", "dev", end.ifname, "root", "handle", "1:", "htb", "default", "2"}));
  }
  cmds.push_back(tc({"class", "replace", "dev", end.ifname, "parent", "1:", "classid", "1:1", "htb",
                     "rate", rate, "ceil", rate, "burst", burst, "cburst", burst, "quantum", quantum}));
  auto leaf_class = [&](const std::string& id) {
    cmds.push_back(tc({"class", "replace", "dev", end.ifname, "parent", "1:1", "classid", "1:" + id,
                       "htb", "rate", share, "ceil", rate, "burst", burst, "cburst", burst,
                       "quantum", quantum}));
    cmds.push_back(tc({"qdisc", "replace", "dev", end.ifname, "parent", "1:" + id, "handle", id + ":",
                       "bfifo", "limit", queue}));
  };
  leaf_class("2");
  for (size_t i = 0; i < senders.size(); ++i) {
    const std::string id = fmt::format("{:x}", 0x100 + i);  // tc reads class ids as hex
    leaf_class(id);
    if (step != ShapeStep::kBuild) continue;
    for (const auto& nic : senders[i]->nics) {
      cmds.push_back(tc({"filter", "add", "dev", end.ifname, "parent", "1:", "protocol", "ip", "prio",
                         "1", "u32", "match", "ip", "src", nic.address + "/32", "flowid", "1:" + id}));
    }
  }
  return cmds;
}

std::vector<Argv> UpCommands(const Layout& layout) {
  std::vector<Argv> cmds;
  const TestbedSpec& spec = layout.spec;
  for (const auto& ns : layout.Namespaces()) {
    cmds.push_back({"ip", "netns", "add", ns});
    cmds.push_back(Ip(ns, {"link", "set", "lo", "up"}));
  }
  // First, so that a congestion control the kernel lacks fails before anything else is built.
  if (!spec.tcp_congestion.empty()) {
    for (const auto& h : layout.hosts) {
      cmds.push_back(Sysctl(h.netns, "net.ipv4.tcp_congestion_control=" + spec.tcp_congestion));
    }
  }
  // Bridges: the star switch has one per rail; a leaf has one per rail holding its hosts'
  // gateway address.
  for (const auto& sw : layout.switches) {
    if (sw.role == "spine") continue;
    for (int k = 0; k < spec.nics; ++k) {
      const std::string br = fmt::format("br{}", k);
      if (sw.role == "leaf") {
        cmds.push_back(Ip(sw.netns, {"link", "add", br, "address",
                                     GatewayMac(std::stoi(sw.name.substr(1)), k), "type", "bridge"}));
      } else {
        cmds.push_back(Ip(sw.netns, {"link", "add", br, "type", "bridge"}));
      }
      cmds.push_back(Ip(sw.netns, {"link", "set", br, "up"}));
    }
  }
  for (const auto& sw : layout.switches) {
    if (sw.role == "bridge") continue;
    cmds.push_back(Sysctl(sw.netns, "net.ipv4.ip_forward=1"));
    cmds.push_back(Sysctl(sw.netns, "net.ipv4.conf.all.rp_filter=0"));
    cmds.push_back(Sysctl(sw.netns, "net.ipv4.conf.default.rp_filter=0"));
    if (spec.hash == EcmpHash::kL4) {
      // Policy 3 hashes the fields named here (addresses, protocol, ports) on every packet;
      // policy 1 takes a forwarded packet's hash from the sending socket when it has one, which
      // left whole runs on one spine.
      cmds.push_back(Sysctl(sw.netns, "net.ipv4.fib_multipath_hash_policy=3"));
      cmds.push_back(Sysctl(sw.netns, "net.ipv4.fib_multipath_hash_fields=0x0037"));
    } else {
      cmds.push_back(Sysctl(sw.netns, "net.ipv4.fib_multipath_hash_policy=0"));
    }
    if (sw.role == "leaf") {
      const int l = std::stoi(sw.name.substr(1));
      for (int k = 0; k < spec.nics; ++k) {
        cmds.push_back(Ip(sw.netns, {"addr", "add", fmt::format("10.{}.{}.254/24", 100 + k, l),
                                     "dev", fmt::format("br{}", k)}));
      }
    }
  }
  for (const auto& l : layout.links) {
    cmds.push_back({"ip", "link", "add", l.a.ifname, "address", l.a.mac, "netns", l.a.netns,
                    "type", "veth", "peer", "name", l.b.ifname, "address", l.b.mac, "netns",
                    l.b.netns});
    for (const LinkEnd* e : {&l.a, &l.b}) {
      cmds.push_back(Ip(e->netns, {"link", "set", e->ifname, "mtu", std::to_string(l.mtu)}));
      if (!e->bridge.empty()) cmds.push_back(Ip(e->netns, {"link", "set", e->ifname, "master", e->bridge}));
      if (!e->address.empty()) {
        cmds.push_back(Ip(e->netns, {"addr", "add", fmt::format("{}/{}", e->address, e->prefix),
                                     "dev", e->ifname}));
      }
      for (auto& c : ShapeCommands(layout, l, *e, l.rate_bps, l.burst_bytes, l.queue_bytes, ShapeStep::kBuild)) {
        cmds.push_back(std::move(c));
      }
      cmds.push_back(Ip(e->netns, {"link", "set", e->ifname, "up"}));
    }
  }
  if (spec.kind == TopologyKind::kLeafSpine) {
    // Hosts: the rest of their rail through the leaf. Leaves: other leaves' subnets over every
    // spine (ECMP). Spines: each leaf's subnets through that leaf.
    for (const auto& h : layout.hosts) {
      const int i = std::stoi(h.name.substr(1));
      const int leaf = i / spec.hosts_per_leaf;
      for (int k = 0; k < spec.nics; ++k) {
        cmds.push_back(Ip(h.netns, {"route", "add", fmt::format("10.{}.0.0/16", 100 + k), "via",
                                    fmt::format("10.{}.{}.254", 100 + k, leaf), "dev",
                                    fmt::format("eth{}", k)}));
      }
    }
    for (const auto& link : layout.links) {
      if (link.a.address.empty() || link.b.address.empty()) continue;  // host links: bridged
      cmds.push_back(Ip(link.a.netns, {"neigh", "replace", link.b.address, "lladdr", link.b.mac,
                                       "dev", link.a.ifname, "nud", "permanent"}));
      cmds.push_back(Ip(link.b.netns, {"neigh", "replace", link.a.address, "lladdr", link.a.mac,
                                       "dev", link.b.ifname, "nud", "permanent"}));
    }
    for (int l = 0; l < spec.leaves; ++l) {
      const std::string leaf_ns = fmt::format("{}-l{}", spec.name, l);
      for (int other = 0; other < spec.leaves; ++other) {
        if (other == l) continue;
        for (int k = 0; k < spec.nics; ++k) {
          Argv route = Ip(leaf_ns, {"route", "add", fmt::format("10.{}.{}.0/24", 100 + k, other)});
          for (int s = 0; s < spec.spines; ++s) {
            for (const auto& part : {std::string("nexthop"), std::string("via"),
                                     fmt::format("10.255.{}.{}", l, 2 * s + 1), std::string("dev"),
                                     fmt::format("s{}", s)}) {
              route.push_back(part);
            }
          }
          cmds.push_back(route);
        }
      }
      for (int s = 0; s < spec.spines; ++s) {
        for (int k = 0; k < spec.nics; ++k) {
          cmds.push_back(Ip(fmt::format("{}-s{}", spec.name, s),
                            {"route", "add", fmt::format("10.{}.{}.0/24", 100 + k, l), "via",
                             fmt::format("10.255.{}.{}", l, 2 * s), "dev", fmt::format("l{}", l)}));
        }
      }
    }
  }
  return cmds;
}

std::vector<Argv> DownCommands(const Layout& layout) {
  std::vector<Argv> cmds;
  for (const auto& ns : layout.Namespaces()) cmds.push_back({"ip", "netns", "del", ns});
  return cmds;
}

}  // namespace genie::testbed
