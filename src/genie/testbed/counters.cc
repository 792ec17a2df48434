#include "genie/testbed/counters.h"

namespace genie::testbed {

namespace {

struct NodeRef {
  std::string node, netns;
};

Result<nlohmann::json> JsonOf(Shell& shell, const Argv& argv) {
  GENIE_ASSIGN_OR_RETURN(std::string text, shell.Output(argv));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption("`" + ToString(argv) + "` printed no JSON: " + e.what());
  }
}

Result<Counters> ReadNodes(const Layout& layout, Shell& shell, bool with_hosts);

uint64_t U(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

}  // namespace

nlohmann::json Counters::ToJson() const {
  nlohmann::json out = {{"interfaces", nlohmann::json::array()}, {"hosts", nlohmann::json::array()}};
  for (const auto& c : interfaces) {
    out["interfaces"].push_back({{"node", c.node},
                                 {"ifname", c.ifname},
                                 {"link", c.link},
                                 {"rx_bytes", c.rx_bytes},
                                 {"tx_bytes", c.tx_bytes},
                                 {"rx_packets", c.rx_packets},
                                 {"tx_packets", c.tx_packets},
                                 {"rx_dropped", c.rx_dropped},
                                 {"tx_dropped", c.tx_dropped},
                                 {"qdisc_bytes", c.qdisc_bytes},
                                 {"qdisc_drops", c.qdisc_drops},
                                 {"qdisc_overlimits", c.qdisc_overlimits},
                                 {"qdisc_backlog_bytes", c.qdisc_backlog_bytes}});
  }
  for (const auto& h : hosts) {
    out["hosts"].push_back({{"host", h.host},
                            {"tcp_retrans_segs", h.retrans_segs},
                            {"tcp_out_segs", h.out_segs},
                            {"tcp_lost_retransmit", h.lost_retransmit},
                            {"tcp_timeouts", h.timeouts}});
  }
  return out;
}

nlohmann::json Counters::QdiscsJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : interfaces) {
    nlohmann::json q = c.qdisc.ToJson();
    q["link"] = c.link;
    q["node"] = c.node;
    q["ifname"] = c.ifname;
    out.push_back(std::move(q));
  }
  return out;
}

const InterfaceCounters* Counters::Find(const std::string& node, const std::string& ifname) const {
  for (const auto& c : interfaces) {
    if (c.node == node && c.ifname == ifname) return &c;
  }
  return nullptr;
}

Result<Counters> ReadCounters(const Layout& layout, Shell& shell) {
  return ReadNodes(layout, shell, /*hosts=*/true);
}

Result<Counters> ReadSwitchCounters(const Layout& layout, Shell& shell) {
  return ReadNodes(layout, shell, /*hosts=*/false);
}

namespace {

Result<Counters> ReadNodes(const Layout& layout, Shell& shell, bool with_hosts) {
  Counters out;
  std::vector<NodeRef> nodes;
  if (with_hosts) {
    for (const auto& h : layout.hosts) nodes.push_back({h.name, h.netns});
  }
  for (const auto& s : layout.switches) nodes.push_back({s.name, s.netns});
  // Which link each (node, ifname) is an end of: only those interfaces are reported.
  std::map<std::pair<std::string, std::string>, std::pair<const Link*, const LinkEnd*>> link_of;
  for (const auto& l : layout.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) link_of[{e->node, e->ifname}] = {&l, e};
  }
  for (const auto& n : nodes) {
    GENIE_ASSIGN_OR_RETURN(nlohmann::json links, JsonOf(shell, {"ip", "-n", n.netns, "-s", "-j", "link", "show"}));
    GENIE_ASSIGN_OR_RETURN(nlohmann::json qdiscs, JsonOf(shell, {"tc", "-n", n.netns, "-raw", "-s", "-j", "qdisc", "show"}));
    for (const auto& l : links) {
      const std::string ifname = l.value("ifname", "");
      auto it = link_of.find({n.node, ifname});
      if (it == link_of.end()) continue;
      const auto [link, end] = it->second;
      InterfaceCounters c;
      c.node = n.node;
      c.ifname = ifname;
      c.link = link->id;
      const auto& s = l.value("stats64", nlohmann::json::object());
      const auto& rx = s.value("rx", nlohmann::json::object());
      const auto& tx = s.value("tx", nlohmann::json::object());
      c.rx_bytes = U(rx, "bytes");
      c.rx_packets = U(rx, "packets");
      c.rx_dropped = U(rx, "dropped");
      c.tx_bytes = U(tx, "bytes");
      c.tx_packets = U(tx, "packets");
      c.tx_dropped = U(tx, "dropped");
      for (const auto& q : qdiscs) {
        if (q.value("dev", "") != ifname || !q.value("root", false)) continue;
        c.qdisc_bytes = U(q, "bytes");
        c.qdisc_drops = U(q, "drops");
        c.qdisc_overlimits = U(q, "overlimits");
        c.qdisc_backlog_bytes = U(q, "backlog");
      }
      c.qdisc = QdiscFromTcJson(qdiscs, ifname);
      if (c.qdisc.kind == "htb" && c.qdisc.rate_bps == 0) c.qdisc.rate_bps = link->rate_bps;
      // What the qdiscs' kinds do not say: whether a tbf or htb orders its packets.
      if (!c.qdisc.kind.empty()) c.qdisc.scheduling = SchedulingName(link->SchedulingOf(*end));
      out.interfaces.push_back(c);
    }
  }
  for (const auto& h : layout.hosts) {
    if (!with_hosts) break;
    GENIE_ASSIGN_OR_RETURN(nlohmann::json nstat,
                           JsonOf(shell, InNamespace(h.netns, {"nstat", "-a", "-s", "-z", "-j"})));
    const auto& k = nstat.value("kernel", nlohmann::json::object());
    out.hosts.push_back({h.name, U(k, "TcpRetransSegs"), U(k, "TcpOutSegs"),
                         U(k, "TcpExtTCPLostRetransmit"), U(k, "TcpExtTCPTimeouts")});
  }
  return out;
}

}  // namespace

Counters Delta(const Counters& before, const Counters& after) {
  Counters d = after;
  for (auto& c : d.interfaces) {
    const InterfaceCounters* b = before.Find(c.node, c.ifname);
    if (!b) continue;
    auto sub = [](uint64_t a, uint64_t x) { return a >= x ? a - x : 0; };
    c.rx_bytes = sub(c.rx_bytes, b->rx_bytes);
    c.tx_bytes = sub(c.tx_bytes, b->tx_bytes);
    c.rx_packets = sub(c.rx_packets, b->rx_packets);
    c.tx_packets = sub(c.tx_packets, b->tx_packets);
    c.rx_dropped = sub(c.rx_dropped, b->rx_dropped);
    c.tx_dropped = sub(c.tx_dropped, b->tx_dropped);
    c.qdisc_bytes = sub(c.qdisc_bytes, b->qdisc_bytes);
    c.qdisc_drops = sub(c.qdisc_drops, b->qdisc_drops);
    c.qdisc_overlimits = sub(c.qdisc_overlimits, b->qdisc_overlimits);
  }
  for (auto& h : d.hosts) {
    for (const auto& b : before.hosts) {
      if (b.host != h.host) continue;
      h.retrans_segs -= std::min(h.retrans_segs, b.retrans_segs);
      h.out_segs -= std::min(h.out_segs, b.out_segs);
      h.lost_retransmit -= std::min(h.lost_retransmit, b.lost_retransmit);
      h.timeouts -= std::min(h.timeouts, b.timeouts);
    }
  }
  return d;
}

}  // namespace genie::testbed
