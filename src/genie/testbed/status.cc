#include "genie/testbed/status.h"

#include <fmt/format.h>

#include "genie/common/units.h"
#include "genie/testbed/control.h"

namespace genie::testbed {

std::string OperStateFromIpJson(std::string_view text) {
  std::string state = "?";
  try {
    auto j = nlohmann::json::parse(text);
    if (!j.empty()) state = j[0].value("operstate", "?");
  } catch (...) {
  }
  return state;
}

std::optional<uint64_t> TbfRateFromTcJson(std::string_view text) {
  std::optional<uint64_t> rate;
  try {
    for (const auto& qd : nlohmann::json::parse(text)) {
      // tc says bytes per second.
      if (qd.value("kind", "") == "tbf") rate = qd.at("options").value("rate", 0ull) * 8;
    }
  } catch (...) {
  }
  return rate;
}

std::vector<LinkEndState> QueryLinkStates(const Layout& layout, Shell& shell) {
  std::vector<LinkEndState> out;
  for (const auto& l : layout.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      LinkEndState s;
      s.rate_bps = l.rate_bps;
      auto info = shell.Output({"ip", "-n", e->netns, "-j", "link", "show", e->ifname});
      if (info.ok()) s.state = OperStateFromIpJson(*info);
      auto q = shell.Output({"tc", "-n", e->netns, "-j", "qdisc", "show", "dev", e->ifname});
      if (q.ok()) s.rate_bps = TbfRateFromTcJson(*q).value_or(s.rate_bps);
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::string FormatStatus(const Layout& layout, const Counters& counters,
                         const std::vector<LinkEndState>& ends) {
  std::string out;
  const auto& s = layout.spec;
  out += fmt::format("testbed {}: {}, {} NIC(s) per host, {} links, ECMP hash {}, TCP {}\n",
                     s.name, s.TopologyText(), s.nics, layout.links.size(),
                     s.hash == EcmpHash::kL3 ? "l3" : "l4",
                     s.tcp_congestion.empty() ? "?" : s.tcp_congestion);
  out += fmt::format("{:<8} {:<12} {:<6} {:<16}\n", "host", "netns", "nic", "address");
  for (const auto& h : layout.hosts) {
    for (const auto& n : h.nics)
      out += fmt::format("{:<8} {:<12} {:<6} {:<16}\n", h.name, h.netns, n.ifname, n.address);
  }
  out += fmt::format("\n{:<7} {:<4} {:<10} {:<6} {:<10} {:>12} {:>12} {:>9} {:>9}\n", "link",
                     "end", "interface", "state", "rate", "tx bytes", "rx bytes", "q drops",
                     "backlog");
  size_t i = 0;
  for (const auto& l : layout.links) {
    for (const LinkEnd* e : {&l.a, &l.b}) {
      const LinkEndState live = i < ends.size() ? ends[i] : LinkEndState{"?", l.rate_bps};
      ++i;
      const InterfaceCounters* c = counters.Find(e->node, e->ifname);
      out += fmt::format("{:<7} {:<4} {:<10} {:<6} {:<10} {:>12} {:>12} {:>9} {:>9}\n", l.id,
                         e->node, e->ifname, live.state, FormatBitRate(live.rate_bps),
                         c ? c->tx_bytes : 0, c ? c->rx_bytes : 0, c ? c->qdisc_drops : 0,
                         c ? c->qdisc_backlog_bytes : 0);
    }
  }
  out += fmt::format("\n{:<8} {:>14} {:>14} {:>10}\n", "host", "tcp out segs", "retrans segs",
                     "timeouts");
  for (const auto& h : counters.hosts) {
    out += fmt::format("{:<8} {:>14} {:>14} {:>10}\n", h.host, h.out_segs, h.retrans_segs,
                       h.timeouts);
  }
  return out;
}

nlohmann::json StatusJson(const Layout& layout, const Counters& counters) {
  nlohmann::json j = layout.ToJson();
  j["counters"] = counters.ToJson();
  return j;
}

Result<std::string> StatusText(const std::string& name, bool json, Shell& shell) {
  GENIE_ASSIGN_OR_RETURN(Layout layout, Load(name));
  GENIE_ASSIGN_OR_RETURN(Counters counters, ReadCounters(layout, shell));
  if (json) return StatusJson(layout, counters).dump(2) + "\n";
  return FormatStatus(layout, counters, QueryLinkStates(layout, shell));
}

}  // namespace genie::testbed
