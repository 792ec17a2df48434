#include "genie/testbed/layout.h"

#include "genie/config/network_config.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace genie::testbed {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string StarAddress(int nic, int host) {
  return fmt::format("10.{}.{}.{}", 100 + nic, host / 250, host % 250 + 1);
}
std::string LeafHostAddress(int nic, int leaf, int j) {
  return fmt::format("10.{}.{}.{}", 100 + nic, leaf, j + 1);
}

nlohmann::json EndJson(const LinkEnd& e) {
  nlohmann::json j = {{"node", e.node}, {"netns", e.netns}, {"ifname", e.ifname}};
  if (!e.bridge.empty()) j["bridge"] = e.bridge;
  if (!e.mac.empty()) j["mac"] = e.mac;
  if (!e.address.empty()) {
    j["address"] = e.address;
    j["prefix"] = e.prefix;
  }
  return j;
}

LinkEnd EndFromJson(const nlohmann::json& j) {
  LinkEnd e;
  e.node = j.at("node").get<std::string>();
  e.netns = j.at("netns").get<std::string>();
  e.ifname = j.at("ifname").get<std::string>();
  e.bridge = j.value("bridge", "");
  e.address = j.value("address", "");
  e.prefix = j.value("prefix", 0);
  e.mac = j.value("mac", "");
  return e;
}

}  // namespace

uint64_t Layout::HostLinkRate() const {
  uint64_t rate = 0;
  for (const auto& l : links) {
    if (!l.id.empty() && l.id[0] == 'h' && (rate == 0 || l.rate_bps < rate)) rate = l.rate_bps;
  }
  return rate;
}

Bytes BurstFor(uint64_t rate_bps) {
  // 1 ms of the rate, never under 128 KiB.
  return std::max<Bytes>(128 * 1024, rate_bps / 8 / 1000);
}

std::string GatewayMac(int leaf, int rail) {
  return fmt::format("02:67:62:{:02x}:{:02x}:{:02x}", (leaf >> 8) & 0xff, leaf & 0xff, rail & 0xff);
}

Bytes DefaultQueueFor(uint64_t rate_bps) {
  // 20 ms of the rate, never under 2 MB: room for a TCP window's burst without drops.
  return std::max<Bytes>(2'000'000, rate_bps / 8 / 50);
}

std::vector<std::string> Layout::Namespaces() const {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.netns);
  for (const auto& s : switches) out.push_back(s.netns);
  return out;
}

const Link* Layout::FindLink(const std::string& id) const {
  for (const auto& l : links) {
    if (l.id == id) return &l;
  }
  return nullptr;
}

const Host* Layout::FindHost(const std::string& name) const {
  for (const auto& h : hosts) {
    if (h.name == name || h.name == "h" + name) return &h;
  }
  return nullptr;
}

std::vector<const Host*> Layout::HostsSendingThrough(const Link& link, const LinkEnd& end) const {
  const bool leaf_side = &end == &link.a;  // spine links have the leaf as a (LayOut)
  const std::string& leaf = link.a.node;
  std::vector<const Host*> out;
  for (const auto& h : hosts) {
    if (h.nics.empty()) continue;
    const Link* host_link = FindLink(h.nics[0].link);
    const bool on_leaf = host_link != nullptr && host_link->b.node == leaf;
    if (on_leaf == leaf_side) out.push_back(&h);
  }
  return out;
}

Result<Layout> LayOut(const TestbedSpec& spec) {
  GENIE_RETURN_IF_ERROR(ValidateSpec(spec));
  Layout out;
  out.spec = spec;
  const std::string& name = spec.name;
  auto host_link = [&](int i, int k) {
    return k == 0 ? fmt::format("h{}", i) : fmt::format("h{}:{}", i, k);
  };
  auto make_link = [&](std::string id, LinkEnd a, LinkEnd b) {
    Link l;
    l.id = std::move(id);
    l.a = std::move(a);
    l.b = std::move(b);
    l.rate_bps = spec.rate_bps;
    l.queue_bytes = spec.queue_bytes;
    l.mtu = spec.mtu;
    if (l.IsHostLink()) l.host_scheduling = spec.host_scheduling.value_or(Scheduling::kAckFirst);
    out.links.push_back(std::move(l));
  };
  auto make_spine_link = [&](std::string id, LinkEnd a, LinkEnd b) {
    make_link(std::move(id), std::move(a), std::move(b));
    if (spec.spine_rate_bps) out.links.back().rate_bps = *spec.spine_rate_bps;
    if (spec.spine_queue_bytes) out.links.back().queue_bytes = *spec.spine_queue_bytes;
    out.links.back().scheduling = spec.spine_scheduling.value_or(Scheduling::kPerHost);
  };
  if (spec.kind == TopologyKind::kStar) {
    out.switches.push_back({"sw", name + "-sw", "bridge"});
    for (int i = 0; i < spec.hosts; ++i) {
      Host h{fmt::format("h{}", i), fmt::format("{}-h{}", name, i), {}};
      for (int k = 0; k < spec.nics; ++k) {
        Nic n{fmt::format("eth{}", k), StarAddress(k, i), 16, host_link(i, k)};
        make_link(n.link, {h.name, h.netns, n.ifname, "", n.address, n.prefix},
                  {"sw", name + "-sw", fmt::format("h{}n{}", i, k), fmt::format("br{}", k), "", 0});
        h.nics.push_back(n);
      }
      out.hosts.push_back(std::move(h));
    }
  } else {
    for (int l = 0; l < spec.leaves; ++l) {
      out.switches.push_back({fmt::format("l{}", l), fmt::format("{}-l{}", name, l), "leaf"});
    }
    for (int s = 0; s < spec.spines; ++s) {
      out.switches.push_back({fmt::format("s{}", s), fmt::format("{}-s{}", name, s), "spine"});
    }
    for (int l = 0; l < spec.leaves; ++l) {
      const std::string leaf = fmt::format("l{}", l), leaf_ns = name + "-" + leaf;
      for (int j = 0; j < spec.hosts_per_leaf; ++j) {
        const int i = l * spec.hosts_per_leaf + j;
        Host h{fmt::format("h{}", i), fmt::format("{}-h{}", name, i), {}};
        for (int k = 0; k < spec.nics; ++k) {
          Nic n{fmt::format("eth{}", k), LeafHostAddress(k, l, j), 24, host_link(i, k)};
          make_link(n.link, {h.name, h.netns, n.ifname, "", n.address, n.prefix},
                    {leaf, leaf_ns, fmt::format("h{}n{}", i, k), fmt::format("br{}", k), "", 0});
          h.nics.push_back(n);
        }
        out.hosts.push_back(std::move(h));
      }
      for (int s = 0; s < spec.spines; ++s) {
        make_spine_link(
            fmt::format("l{}-s{}", l, s),
            {leaf, leaf_ns, fmt::format("s{}", s), "", fmt::format("10.255.{}.{}", l, 2 * s), 31},
            {fmt::format("s{}", s), fmt::format("{}-s{}", name, s), fmt::format("l{}", l), "",
             fmt::format("10.255.{}.{}", l, 2 * s + 1), 31});
      }
    }
  }
  for (const auto& o : spec.links) {
    auto it = std::find_if(out.links.begin(), out.links.end(),
                           [&](const Link& l) { return l.id == o.link; });
    if (it == out.links.end()) {
      return Status::InvalidArgument("links: '" + o.link + "' is not a link of " +
                                     spec.TopologyText() +
                                     " (host links are h0, h1, ... or h3:1 for NIC 1; "
                                     "fabric links l0-s0, ...)");
    }
    if (o.rate_bps) it->rate_bps = *o.rate_bps;
    if (o.queue_bytes) it->queue_bytes = *o.queue_bytes;
    if (o.mtu) it->mtu = *o.mtu;
  }
  for (size_t i = 0; i < out.links.size(); ++i) {
    out.links[i].a.mac = fmt::format("02:67:6e:{:02x}:{:02x}:00", (i >> 8) & 0xff, i & 0xff);
    out.links[i].b.mac = fmt::format("02:67:6e:{:02x}:{:02x}:01", (i >> 8) & 0xff, i & 0xff);
  }
  for (auto& l : out.links) {
    if (l.queue_bytes == 0) l.queue_bytes = DefaultQueueFor(l.rate_bps);
    l.burst_bytes = BurstFor(l.rate_bps);
  }
  return out;
}

nlohmann::json Layout::ToJson() const {
  nlohmann::json j;
  j["format"] = "genie-testbed/1";
  j["name"] = spec.name;
  j["topology"] = spec.TopologyText();
  j["nics"] = spec.nics;
  j["rate_bps"] = spec.rate_bps;
  j["mtu"] = spec.mtu;
  j["hash"] = spec.hash == EcmpHash::kL3 ? "l3" : "l4";
  j["tcp_congestion"] = spec.tcp_congestion;
  j["rendezvous_address"] = RendezvousAddress();
  for (const auto& h : hosts) {
    nlohmann::json nics = nlohmann::json::array();
    for (const auto& n : h.nics) {
      nics.push_back({{"ifname", n.ifname}, {"address", n.address}, {"prefix", n.prefix},
                      {"link", n.link}});
    }
    j["hosts"].push_back({{"name", h.name}, {"netns", h.netns}, {"nics", nics}});
  }
  for (const auto& s : switches) {
    j["switches"].push_back({{"name", s.name}, {"netns", s.netns}, {"role", s.role}});
  }
  for (const auto& l : links) {
    nlohmann::json& link = j["links"].emplace_back();
    link = {{"id", l.id},
            {"a", EndJson(l.a)},
            {"b", EndJson(l.b)},
            {"rate_bps", l.rate_bps},
            {"queue_bytes", l.queue_bytes},
            {"burst_bytes", l.burst_bytes},
            {"mtu", l.mtu},
            {"scheduling", SchedulingName(l.scheduling)}};
    if (l.IsHostLink()) link["host_scheduling"] = SchedulingName(l.host_scheduling);
  }
  return j;
}

Result<Layout> LayoutFromJson(const nlohmann::json& j, const std::string& origin) {
  try {
    if (j.value("format", "") != "genie-testbed/1") {
      return Status::InvalidArgument(origin + ": not a genie testbed description "
                                              "(format genie-testbed/1)");
    }
    TestbedSpec spec;
    spec.name = j.at("name").get<std::string>();
    GENIE_RETURN_IF_ERROR(ParseTopology(j.at("topology").get<std::string>(), &spec));
    spec.nics = j.at("nics").get<int>();
    spec.rate_bps = j.at("rate_bps").get<uint64_t>();
    spec.mtu = j.at("mtu").get<int>();
    spec.hash = j.value("hash", "l4") == "l3" ? EcmpHash::kL3 : EcmpHash::kL4;
    // "": a testbed from before the key, whose hosts kept the machine's.
    spec.tcp_congestion = j.value("tcp_congestion", "");
    Layout out;
    out.spec = spec;
    for (const auto& h : j.at("hosts")) {
      Host host{h.at("name"), h.at("netns"), {}};
      for (const auto& n : h.at("nics")) {
        host.nics.push_back({n.at("ifname"), n.at("address"), n.at("prefix"), n.at("link")});
      }
      out.hosts.push_back(std::move(host));
    }
    for (const auto& s : j.at("switches")) out.switches.push_back({s.at("name"), s.at("netns"), s.at("role")});
    for (const auto& l : j.at("links")) {
      Link link;
      link.id = l.at("id");
      link.a = EndFromJson(l.at("a"));
      link.b = EndFromJson(l.at("b"));
      link.rate_bps = l.at("rate_bps");
      link.queue_bytes = l.at("queue_bytes");
      link.burst_bytes = l.at("burst_bytes");
      link.mtu = l.at("mtu");
      auto bad = [&](const std::string& why) {
        return Status::InvalidArgument(origin + ": link " + link.id + ": " + why);
      };
      // Absent: a testbed from before the key, whose links (host ends too) were all one FIFO.
      for (auto [key, into] : {std::pair{"scheduling", &link.scheduling},
                               std::pair{"host_scheduling", &link.host_scheduling}}) {
        auto sched = ParseScheduling(l.value(key, "fifo"));
        if (!sched.ok()) return bad(sched.status().message());
        *into = *sched;
      }
      // As ValidateSpec holds a spec: per-host needs several senders, ack-first a host's NIC.
      if (link.host_scheduling == Scheduling::kPerHost || link.scheduling == Scheduling::kAckFirst) {
        return bad("per-host is for spine links, ack-first for a host's NIC");
      }
      out.links.push_back(std::move(link));
    }
    if (out.hosts.empty() || out.hosts[0].nics.empty()) {
      return Status::InvalidArgument(origin + ": the description has no hosts");
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(origin + ": damaged testbed description (" + e.what() +
                                   "); `genie testbed down NAME` removes what it can");
  }
}

std::string ToNetworkYml(const Layout& layout, int ranks_per_host, double one_way_latency_ns,
                         const MeasuredCosts* measured,
                         const std::vector<config::EcmpRoute>* ecmp_routes, int machine_cores) {
  const TestbedSpec& s = layout.spec;
  const int r = std::max(1, ranks_per_host);
  // Ranks of a host share its NIC (rail 0..nics-1): each rank's share of the host's links.
  const double host_gbps = static_cast<double>(s.rate_bps) / 8 / kGiB * s.nics / r;
  const double lat = std::max(1.0, std::round(one_way_latency_ns));
  std::vector<std::string> topo, npus, bw, latency, goodput, overhead;
  auto dim = [&](const char* kind, int n, double gbps, double ns,
                 double own_goodput = config::kDefaultGoodput) {
    topo.push_back(kind);
    npus.push_back(std::to_string(n));
    bw.push_back(fmt::format("{:.6g}", gbps));
    latency.push_back(fmt::format("{:.6g}", ns));
    const bool network = measured != nullptr && topo.size() <= (s.kind == TopologyKind::kStar ? 1u : 2u);
    goodput.push_back(fmt::format("{:.4g}", network ? measured->goodput : own_goodput));
    overhead.push_back(fmt::format(
        "{:.6g}", network ? std::round(measured->message_overhead_ns)
                          : config::kDefaultMessageOverheadNs));
  };
  double spine_gbps = 0;   // leafspine: the slowest leaf-spine link, per direction
  double spine_burst = 0;  // and its tbf bucket, bytes
  if (s.kind == TopologyKind::kStar) {
    dim("Switch", s.hosts, host_gbps, lat);
  } else {
    uint64_t spine_bps = 0;
    for (const Link& l : layout.links) {
      if (l.id.find('-') != std::string::npos && (spine_bps == 0 || l.rate_bps < spine_bps)) {
        spine_bps = l.rate_bps;
        spine_burst = static_cast<double>(l.burst_bytes);
      }
    }
    if (spine_bps == 0) spine_bps = s.rate_bps;
    spine_gbps = static_cast<double>(spine_bps) / 8 / kGiB;
    // ASTRA-sim's view: cross-leaf traffic of a leaf's hosts shares the leaf's uplinks (S
    // spines), each rank's share as its own dimension-1 link.
    const double uplink = spine_gbps * s.spines;
    const double per_host = std::min(host_gbps, uplink / (s.hosts_per_leaf * r));
    dim("Switch", s.hosts_per_leaf, host_gbps, lat);
    dim("Switch", s.leaves, per_host, 2 * lat);
  }
  // `genie launch --testbed` puts rank i on host i mod H, so the hosts are the fastest-varying
  // dimension and the ranks of one host the last; those talk over the namespace's loopback.
  if (r > 1) {
    dim("Switch", r, config::kHostLoopbackGbps, config::kHostLoopbackLatencyNs,
        config::kHostLoopbackGoodput);
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string out = "[ ";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out + " ]";
  };
  std::string text = fmt::format(
      "# ASTRA-sim network of genie testbed '{}' ({}, {} NIC(s) of {} per host, {} rank(s) per "
      "host). Bandwidth in GB/s (2^30 B/s), latency in ns.\n"
      "topology: {}\nnpus_count: {}\nbandwidth: {}\nlatency: {}\n",
      s.name, s.TopologyText(), s.nics, FormatBitRate(s.rate_bps), r, list(topo), list(npus),
      list(bw), list(latency));
  if (r > 1) {
    text += fmt::format(
        "# The ranks of one host talk over its loopback (the flow model's keys).\n"
        "loopback_dimension: {}\n",
        topo.size() - 1);
    if (measured == nullptr) text += fmt::format("goodput: {}\n", list(goodput));
  }
  if (machine_cores > 0) {
    // A TCP stream keeps about one core busy copying: 2.0 GB/s over a namespace's loopback
    // alone, 4.0-4.3 GB/s in all with 2 to 8 at once on a 2-core machine (2026-12-07).
    text += fmt::format(
        "# The hosts are namespaces of one machine of {} core(s), which copy every byte they "
        "send: loopback GB/s in all (the flow model's key).\nmachine_bandwidth: {:.6g}\n",
        machine_cores, config::kHostLoopbackGbps * machine_cores);
  }
  if (measured != nullptr) {
    text += fmt::format(
        "# Measured by genie testbed calibrate (the flow model's keys; ASTRA-sim ignores them).\n"
        "goodput: {}\nmessage_overhead: {}\n",
        list(goodput), list(overhead));
    if (!measured->message_times.empty()) {
      text +=
          "# Measured by genie testbed calibrate with every host sending at once: [bytes, ns] of "
          "one ring step per message size (the flow model sizes messages between hosts by it).\n"
          "message_times: [";
      for (size_t i = 0; i < measured->message_times.size(); ++i) {
        text += fmt::format("{}[{:.0f}, {:.0f}]", i ? ", " : " ", measured->message_times[i].first,
                            measured->message_times[i].second);
      }
      text += " ]\n";
    }
    if (measured->burst_bytes > 0 && !measured->burst_message_times.empty()) {
      // The hosts' links (dimension 0) and a leaf-spine's spine links (dimension 1's).
      std::vector<std::string> burst;
      for (size_t d = 0; d < topo.size(); ++d) {
        const double b = d == 0 ? measured->burst_bytes : d == 1 ? spine_burst : 0.0;
        burst.push_back(fmt::format("{:.0f}", b));
      }
      text += fmt::format(
          "# The links' tbf burst, and what the first ring step of each size took with every "
          "bucket full (genie testbed calibrate; the flow model's keys).\n"
          "burst: {}\nburst_message_times: [",
          list(burst));
      for (size_t i = 0; i < measured->burst_message_times.size(); ++i) {
        text += fmt::format("{}[{:.0f}, {:.0f}]", i ? ", " : " ",
                            measured->burst_message_times[i].first,
                            measured->burst_message_times[i].second);
      }
      text += " ]\n";
    }
  }
  if (s.kind == TopologyKind::kLeafSpine) {
    // The flow model routes over the real fabric instead of dimension 1's per-rank links:
    // every host of a leaf shares its uplinks. The testbed's ECMP hash (l4: ephemeral ports)
    // is unknown, so every message is spread over the spines; with l3 the leaves were asked
    // which spine each pair takes (ecmp.h), and those pairs are pinned to it.
    const bool known = ecmp_routes != nullptr && !ecmp_routes->empty();
    text += fmt::format(
        "# The leaf-spine fabric, for genie's flow model (ASTRA-sim ignores these keys): "
        "dimension 1 is {} leaves joined by {} spine(s), each leaf-spine link {} per direction; "
        "ECMP hash {} {}.\n"
        "spines: {}\nspine_bandwidth: {:.6g}\nspine_latency: {:.6g}\necmp: split\n",
        s.leaves, s.spines, FormatBitRate(static_cast<uint64_t>(spine_gbps * kGiB * 8 + 0.5)),
        s.hash == EcmpHash::kL3 ? "l3" : "l4",
        known ? "known: each pair of hosts on the spine its leaf picks (ip route get), "
                "[src host, dst host, spine]"
              : "unknown to the model: split",
        s.spines, spine_gbps, lat);
    if (known) {
      text += "ecmp_routes: [";
      for (size_t i = 0; i < ecmp_routes->size(); ++i) {
        const config::EcmpRoute& route = (*ecmp_routes)[i];
        text += fmt::format("{}[{}, {}, {}]", i ? ", " : " ", route.src_host, route.dst_host,
                            route.spine);
      }
      text += " ]\n";
    }
  }
  return text;
}

}  // namespace genie::testbed
