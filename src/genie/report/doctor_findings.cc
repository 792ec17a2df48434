#include "genie/report/doctor_findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "genie/report/bandwidth.h"
#include "genie/report/path_blame.h"

namespace genie::report {
namespace {

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

double At(const std::vector<std::vector<double>>& m, int a, int b) {
  if (a < 0 || b < 0 || static_cast<size_t>(a) >= m.size()) return std::nan("");
  const auto& row = m[static_cast<size_t>(a)];
  return static_cast<size_t>(b) < row.size() ? row[static_cast<size_t>(b)] : std::nan("");
}

// Every off-diagonal entry.
std::vector<double> Entries(const std::vector<std::vector<double>>& m, int n) {
  std::vector<double> v;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) v.push_back(At(m, a, b));
  return v;
}

// Three significant digits, as every terminal summary and the HTML report (bandwidth.h).
std::string Gb(double gbps) { return FormatBandwidth(gbps) + " GB/s"; }

}  // namespace

const char* FindingName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kFabricSlow: return "fabric_slow";
    case FindingKind::kSlowTransmit: return "slow_transmit";
    case FindingKind::kSlowReceive: return "slow_receive";
    case FindingKind::kSlowLink: return "slow_link";
    case FindingKind::kSlowPair: return "slow_pair";
    case FindingKind::kSlowUplink: return "slow_uplink";
    case FindingKind::kSlowPath: return "slow_path";
    case FindingKind::kHighLatency: return "high_latency";
    case FindingKind::kSlowPairLatency: return "high_latency_pair";
    case FindingKind::kLossy: return "lossy_link";
    case FindingKind::kLossyPair: return "lossy_pair";
    case FindingKind::kRing: return "slow_ring_hop";
    case FindingKind::kIncast: return "incast";
    case FindingKind::kAllToAll: return "slow_all_to_all";
  }
  return "?";
}

DoctorVerdict Diagnose(const DoctorScan& s, const DoctorThresholds& t) {
  DoctorVerdict v;
  const int n = static_cast<int>(s.hosts.size());
  const auto& H = s.hosts;
  v.tx_gbps.assign(static_cast<size_t>(n), std::nan(""));
  v.rx_gbps = v.tx_gbps;
  v.rtt_us = v.tx_gbps;
  if (n < 2) return v;
  v.reference_gbps = Median(Entries(s.gbps, n));
  v.reference_rtt_us = Median(Entries(s.rtt_us, n));
  const double ref = v.reference_gbps, rref = v.reference_rtt_us;
  // A host (or a pair) is judged against the transfers of the others, its own left out: where
  // its transfers are a large share of those measured (a few hosts, or a run's localisation of
  // ring neighbours only) they would drag down the yardstick they are measured with.
  struct Entry {
    int from, to;
    double gbps;
  };
  std::vector<Entry> measured_entries;
  double fastest = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      const double g = At(s.gbps, a, b);
      if (a == b || std::isnan(g)) continue;
      measured_entries.push_back({a, b, g});
      fastest = std::max(fastest, g);
    }
  }
  auto ref_without = [&](int a, int b) {
    std::vector<double> others;
    for (const auto& e : measured_entries) {
      if (e.from != a && e.from != b && e.to != a && e.to != b) others.push_back(e.gbps);
    }
    return others.empty() ? ref : Median(std::move(others));
  };
  std::vector<double> host_ref(static_cast<size_t>(n));
  for (int h = 0; h < n; ++h) host_ref[static_cast<size_t>(h)] = ref_without(h, h);
  auto slow_for = [&](int h, int a, int b) {
    return At(s.gbps, a, b) < t.slow * host_ref[static_cast<size_t>(h)];
  };
  std::map<std::pair<int, int>, bool> slow_pairs;  // judged on first use
  auto slow = [&](int a, int b) {
    const double g = At(s.gbps, a, b);
    if (std::isnan(g) || g >= t.slow * fastest) return false;
    auto [it, fresh] = slow_pairs.try_emplace({a, b}, false);
    if (fresh) it->second = g < t.slow * ref_without(a, b);
    return it->second;
  };
  auto late = [&](int a, int b) {
    double r = At(s.rtt_us, a, b);
    return r > t.latency * rref && r > rref + t.latency_floor_us;
  };
  auto lossy = [&](int a, int b) { return At(s.retrans, a, b) > t.loss; };
  // A host side is to blame only when most of its measured transfers show it (more than half,
  // and at least two): with one bad host, each other host meets it once. A full scan measures
  // every peer; a run's localisation only the peers the workload used.
  auto most = [](int count, int measured) { return measured >= 2 && 2 * count > measured; };
  auto measured = [&](const std::vector<std::vector<double>>& m, int h, bool as_sender) {
    int k = 0;
    for (int p = 0; p < n; ++p) k += p != h && !std::isnan(as_sender ? At(m, h, p) : At(m, p, h));
    return k;
  };

  // Slow transfers a switch-to-switch link explains (their paths known, path_blame.h): they
  // count against no host — a host whose slow peers all sent over one slow link, while its
  // other transfers were healthy, is not slow itself.
  PathVerdict paths = BlamePaths(s, slow, t.slow, ref);
  auto on_uplink = [&](int a, int b) {
    return paths.explained[static_cast<size_t>(a)][static_cast<size_t>(b)];
  };
  std::vector<bool> tx_bad(static_cast<size_t>(n)), rx_bad(static_cast<size_t>(n)),
      late_bad(static_cast<size_t>(n));
  for (int h = 0; h < n; ++h) {
    std::vector<double> out, in, rtt;
    int slow_out = 0, slow_in = 0, late_n = 0;
    for (int p = 0; p < n; ++p) {
      if (p == h) continue;
      out.push_back(At(s.gbps, h, p));
      in.push_back(At(s.gbps, p, h));
      rtt.push_back(At(s.rtt_us, h, p));
      slow_out += slow_for(h, h, p) && !on_uplink(h, p);
      slow_in += slow_for(h, p, h) && !on_uplink(p, h);
      late_n += late(h, p);
    }
    const auto i = static_cast<size_t>(h);
    v.tx_gbps[i] = Median(out);
    v.rx_gbps[i] = Median(in);
    v.rtt_us[i] = Median(rtt);
    tx_bad[i] = most(slow_out, measured(s.gbps, h, true));
    rx_bad[i] = most(slow_in, measured(s.gbps, h, false));
    late_bad[i] = most(late_n, measured(s.rtt_us, h, true));
    const double href = host_ref[i];
    if (tx_bad[i] && rx_bad[i]) {
      v.findings.push_back({FindingKind::kSlowLink, h, -1,
                            std::min(v.tx_gbps[i], v.rx_gbps[i]), href,
                            fmt::format("{}: both directions slow — transmit {}, receive {}, "
                                        "peers {} (check the NIC, its cable and switch port)",
                                        H[i], Gb(v.tx_gbps[i]), Gb(v.rx_gbps[i]), Gb(href))});
    } else if (tx_bad[i]) {
      v.findings.push_back({FindingKind::kSlowTransmit, h, -1, v.tx_gbps[i], href,
                            fmt::format("{}: transmit side slow — {} to its peers, {:.0f} % of "
                                        "the {} others get (its NIC's egress or its port's "
                                        "ingress: rate limit, autonegotiation, shaping)",
                                        H[i], Gb(v.tx_gbps[i]), 100 * v.tx_gbps[i] / href, Gb(href))});
    } else if (rx_bad[i]) {
      v.findings.push_back({FindingKind::kSlowReceive, h, -1, v.rx_gbps[i], href,
                            fmt::format("{}: receive side slow — {} from its peers, {:.0f} % of "
                                        "the {} others get (the switch port's egress toward it, "
                                        "its NIC's receive path)",
                                        H[i], Gb(v.rx_gbps[i]), 100 * v.rx_gbps[i] / href, Gb(href))});
    }
    if (late_bad[i]) {
      v.findings.push_back({FindingKind::kHighLatency, h, -1, v.rtt_us[i], rref,
                            fmt::format("{}: slow to answer — round trip {:.0f} µs to its peers, "
                                        "others {:.0f} µs (a queue or a delay on its link)",
                                        H[i], v.rtt_us[i], rref)});
    }
  }
  // The fabric as a whole, on the transfers no named host or slow uplink explains (those are
  // their own findings, not the fabric's): listed first.
  std::vector<double> unnamed;
  for (const auto& e : measured_entries) {
    const auto f = static_cast<size_t>(e.from), to = static_cast<size_t>(e.to);
    if (!tx_bad[f] && !rx_bad[f] && !tx_bad[to] && !rx_bad[to] && !on_uplink(e.from, e.to)) {
      unnamed.push_back(e.gbps);
    }
  }
  const double fabric = unnamed.empty() ? ref : Median(unnamed);
  if (s.expected_gbps > 0 && fabric < t.fabric * s.expected_gbps) {
    v.findings.insert(v.findings.begin(),
                      {FindingKind::kFabricSlow, -1, -1, fabric, s.expected_gbps,
                       fmt::format("every transfer is slow: the median pair gives {}, {:.0f} % "
                                   "of the {} expected ({})",
                                   Gb(fabric), 100 * fabric / s.expected_gbps,
                                   Gb(s.expected_gbps), s.expected_source)});
  }
  // Loss: a host's link when most of its peers saw retransmissions on transfers with it.
  std::vector<bool> loss_bad(static_cast<size_t>(n));
  for (int h = 0; h < n; ++h) {
    int partners = 0, in = 0, out = 0, known = 0;
    double worst = 0;
    for (int p = 0; p < n; ++p) {
      if (p == h) continue;
      known += !std::isnan(At(s.retrans, p, h)) || !std::isnan(At(s.retrans, h, p));
      in += lossy(p, h);
      out += lossy(h, p);
      partners += lossy(p, h) || lossy(h, p);
      worst = std::max({worst, At(s.retrans, p, h), At(s.retrans, h, p)});
    }
    if (!most(partners, known)) continue;
    loss_bad[static_cast<size_t>(h)] = true;
    const char* side = in > 2 * out ? " on its receive side"
                       : out > 2 * in ? " on its transmit side" : "";
    v.findings.push_back({FindingKind::kLossy, h, -1, worst, t.loss,
                          fmt::format("{}: its link drops packets{} — retransmissions on "
                                      "transfers with {} of its {} peers, up to {:.1f} % of "
                                      "segments (check the cable/optics, FEC and CRC counters)",
                                      H[static_cast<size_t>(h)], side, partners, known,
                                      100 * worst)});
  }
  auto named = [&](int h) {
    const auto i = static_cast<size_t>(h);
    return tx_bad[i] || rx_bad[i] || late_bad[i] || loss_bad[i];
  };
  // The switch links (or the choices between parts) that explain slow transfers.
  v.findings.insert(v.findings.end(), paths.findings.begin(), paths.findings.end());
  // What no host or link explains: single pairs.
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
      if (slow(a, b) && !tx_bad[ia] && !rx_bad[ib] && !loss_bad[ia] && !loss_bad[ib] &&
          !on_uplink(a, b)) {
        v.findings.push_back({FindingKind::kSlowPair, a, b, At(s.gbps, a, b), ref,
                              fmt::format("{} -> {}: slow — {}, peers {} (the path between "
                                          "them: a switch port, an uplink, a route)",
                                          H[ia], H[ib], Gb(At(s.gbps, a, b)), Gb(ref))});
      }
      if (a < b && late(a, b) && !late_bad[ia] && !late_bad[ib]) {
        v.findings.push_back({FindingKind::kSlowPairLatency, a, b, At(s.rtt_us, a, b), rref,
                              fmt::format("{} <-> {}: round trip {:.0f} µs, others {:.0f} µs",
                                          H[ia], H[ib], At(s.rtt_us, a, b), rref)});
      }
      if (lossy(a, b) && !loss_bad[ia] && !loss_bad[ib]) {
        v.findings.push_back({FindingKind::kLossyPair, a, b, At(s.retrans, a, b), t.loss,
                              fmt::format("{} -> {}: {:.1f} % of segments retransmitted",
                                          H[ia], H[ib], 100 * At(s.retrans, a, b))});
      }
    }
  }
  // Collective patterns: only when the pairwise scan found nothing. A slow host slows every
  // pattern it takes part in, and which hosts that shows at depends on who waits for whom —
  // naming them would blame hosts for it.
  bool pairwise_clean = true;
  for (const auto& f : v.findings) pairwise_clean &= f.kind == FindingKind::kFabricSlow;
  if (!pairwise_clean) return v;
  for (int h = 0; h < static_cast<int>(s.ring_gbps.size()) && h < n; ++h) {
    const int prev = (h + n - 1) % n;
    const double g = s.ring_gbps[static_cast<size_t>(h)];
    if (g < t.pattern * ref && !named(h) && !named(prev) && !slow(prev, h)) {
      v.findings.push_back({FindingKind::kRing, prev, h, g, ref,
                            fmt::format("ring hop {} -> {}: {} while every host sends, {} alone "
                                        "({})",
                                        H[static_cast<size_t>(prev)], H[static_cast<size_t>(h)],
                                        Gb(g), Gb(ref),
                                        s.one_switch
                                            ? "one switch, no shared path: the switch carrying "
                                              "every port at once, or the hosts' CPUs"
                                            : "shared uplinks or a switch that cannot carry "
                                              "every port at once")});
    }
  }
  if (s.incast_gbps > 0 && s.incast_gbps < t.pattern * ref && !named(0)) {
    v.findings.push_back({FindingKind::kIncast, 0, -1, s.incast_gbps, ref,
                          fmt::format("incast into {}: {} from {} senders, below one link's {} "
                                      "(drops in the switch's buffer toward {}: check its "
                                      "buffer and ECN/PFC settings)",
                                      H[0], Gb(s.incast_gbps), n - 1, Gb(ref), H[0])});
  }
  const double a2a = Median(s.alltoall_gbps);
  for (int h = 0; h < static_cast<int>(s.alltoall_gbps.size()) && h < n; ++h) {
    const double g = s.alltoall_gbps[static_cast<size_t>(h)];
    if (g < t.pattern * a2a && !named(h)) {
      v.findings.push_back({FindingKind::kAllToAll, h, -1, g, a2a,
                            fmt::format("all-to-all: {} receives {}, the median host {} ({})",
                                        H[static_cast<size_t>(h)], Gb(g), Gb(a2a),
                                        s.one_switch
                                            ? "one switch, no shared path: its receive side "
                                              "or the CPU serving it"
                                            : "uneven paths: ECMP hashing or an uplink")});
    }
  }
  return v;
}

double IncastSendShare(const DoctorScan& s, double median_gbps) {
  if (s.hosts.size() < 3 || s.incast_send_gbps <= 0) return -1;
  double alone = s.gbps.size() > 1 && s.gbps[0].size() > 1 ? s.gbps[0][1] : std::nan("");
  if (!(alone > 0)) alone = median_gbps;
  return alone > 0 ? s.incast_send_gbps / alone : -1;
}

std::string IncastSendNote(const DoctorScan& s, const DoctorVerdict& v) {
  const double share = IncastSendShare(s, v.reference_gbps);
  // On a fabric with findings a slow side of h0 or h1 reads the same: nothing to add there.
  if (s.loopback || !v.findings.empty() || share < 0 || share >= kIncastSendShare) return "";
  return fmt::format(
      "{} sent {} to {} while {} host(s) sent into it, {:.2f} of what it sends {} alone: its "
      "connections' ACKs wait in the switch's queue toward {}, so a window that does not grow "
      "to cover that round trip (bbr's, about its ACK-aggregation allowance on a LAN; cubic's, "
      "small after slow start or a loss) leaves its link idle; a shallower queue keeps more of "
      "it (bench/incast_outbound.sh). Not a fault, but genie's prediction (max-min shares) does "
      "not have it: a host receiving from several peers while it sends can send slower than "
      "predicted",
      s.hosts[0], Gb(s.incast_send_gbps), s.hosts[1], s.hosts.size() - 2, share, s.hosts[1],
      s.hosts[0]);
}

std::string FormatDoctorReport(const DoctorScan& s, const DoctorVerdict& v) {
  const int n = static_cast<int>(s.hosts.size());
  std::string out = fmt::format(
      "# genie doctor: {} hosts, {} per direction, pairwise in {} rounds, then ring, incast, "
      "all-to-all{}; {:.1f} s\n",
      n, s.bytes_per_direction >= (1 << 20)
             ? fmt::format("{:.0f} MiB", s.bytes_per_direction / (1 << 20))
             : fmt::format("{:.0f} KiB", s.bytes_per_direction / 1024),
      n % 2 ? n : n - 1, s.incast_send_gbps > 0 ? ", sending under incast" : "", s.seconds);
  if (s.loopback) {
    out += "# LOOPBACK SCAN (--allow-shared-host): the ranks share a host, so every figure below "
           "is that machine's CPUs and loopback, not a fabric\n";
  }
  return out + FormatHostFindings(s, v, /*patterns=*/true);
}

std::string FormatHostFindings(const DoctorScan& s, const DoctorVerdict& v, bool patterns) {
  const int n = static_cast<int>(s.hosts.size());
  std::string out;
  if (s.expected_gbps > 0) {
    out += fmt::format("# expected per link: {} ({})\n", Gb(s.expected_gbps), s.expected_source);
  }
  out += fmt::format("#{:>11} {:>10} {:>10} {:>9} {:>8}", "host", "tx GB/s", "rx GB/s", "rtt us",
                     "retx %");
  if (patterns) out += fmt::format(" {:>10} {:>10}", "ring GB/s", "a2a GB/s");
  out += s.loopback ? "  (all loopback)\n" : "  verdict\n";
  for (int h = 0; h < n; ++h) {
    const auto i = static_cast<size_t>(h);
    double retx = 0;
    for (int p = 0; p < n; ++p)
      if (p != h) retx = std::max({retx, At(s.retrans, h, p), At(s.retrans, p, h)});
    std::string verdict;
    for (const auto& f : v.findings) {
      if (f.host == h || f.peer == h) {
        if (!verdict.empty()) verdict += ",";
        verdict += FindingName(f.kind);
      }
    }
    auto opt = [](const std::vector<double>& x, size_t k) {
      return fmt::format("{:>10}", k < x.size() ? FormatBandwidth(x[k]) : std::string("-"));
    };
    out += fmt::format(" {:>11} {:>10} {:>10} {:9.0f} {:8.2f}", s.hosts[i],
                       FormatBandwidth(v.tx_gbps[i]), FormatBandwidth(v.rx_gbps[i]), v.rtt_us[i],
                       100 * retx);
    if (patterns) out += fmt::format(" {} {}", opt(s.ring_gbps, i), opt(s.alltoall_gbps, i));
    out += fmt::format("  {}\n", s.loopback ? "loopback" : verdict.empty() ? "ok" : verdict);
  }
  out += fmt::format("# median pair: {}, round trip {:.0f} us", Gb(v.reference_gbps),
                     v.reference_rtt_us);
  out += patterns ? fmt::format("; incast into {}: {}", n > 0 ? s.hosts[0] : "-",
                                Gb(s.incast_gbps))
                  : "";
  if (patterns && s.incast_send_gbps > 0) {
    out += fmt::format(", {} sending meanwhile: {}", s.hosts[0], Gb(s.incast_send_gbps));
  }
  out += "\n";
  if (const std::string note = IncastSendNote(s, v); !note.empty()) {
    out += "# note: " + note + "\n";
  }
  if (s.remeasured > 0) {
    out += fmt::format("# {} slow transfer(s) measured again alone; {} were slow only while other "
                       "pairs ran (shared paths, e.g. two flows hashed onto one uplink: not "
                       "faults)\n",
                       s.remeasured, s.contended);
  }
  if (s.loopback) {
    out += "# no verdict: loopback figures say nothing of a fabric; scan with one rank per host\n";
  } else if (v.healthy()) {
    out += "# healthy: no host, pair or link stands out\n";
  } else {
    out += fmt::format("# {} finding(s):\n", v.findings.size());
    for (const auto& f : v.findings) out += "  " + f.text + "\n";
  }
  return out;
}

nlohmann::json DoctorJson(const DoctorScan& s, const DoctorVerdict& v) {
  auto clean = [](const std::vector<std::vector<double>>& m) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& row : m) {
      nlohmann::json r = nlohmann::json::array();
      for (double x : row) r.push_back(std::isnan(x) ? nlohmann::json() : nlohmann::json(x));
      j.push_back(r);
    }
    return j;
  };
  nlohmann::json j;
  j["healthy"] = v.healthy() && !s.loopback;
  if (s.loopback) j["loopback"] = true;  // every figure: one machine's loopback, no verdict
  j["hosts"] = s.hosts;
  j["seconds"] = s.seconds;
  j["bytes_per_direction"] = s.bytes_per_direction;
  j["expected_gbps"] = s.expected_gbps;
  j["expected_source"] = s.expected_source;
  j["reference_gbps"] = v.reference_gbps;
  j["reference_rtt_us"] = v.reference_rtt_us;
  j["pairwise"] = {{"gbps", clean(s.gbps)}, {"rtt_us", clean(s.rtt_us)},
                   {"retransmitted", clean(s.retrans)}};
  j["per_host"] = nlohmann::json::array();
  for (size_t i = 0; i < s.hosts.size(); ++i) {
    j["per_host"].push_back({{"host", s.hosts[i]},
                             {"tx_gbps", v.tx_gbps[i]},
                             {"rx_gbps", v.rx_gbps[i]},
                             {"rtt_us", v.rtt_us[i]},
                             {"ring_rx_gbps", i < s.ring_gbps.size() ? s.ring_gbps[i] : 0},
                             {"alltoall_rx_gbps",
                              i < s.alltoall_gbps.size() ? s.alltoall_gbps[i] : 0}});
  }
  if (!s.paths.empty()) {
    // The switch links each direction crossed: the evidence a link finding rests on.
    nlohmann::json paths = nlohmann::json::array();
    for (const auto& p : s.paths) {
      nlohmann::json crossings = nlohmann::json::array();
      for (const auto& c : p.crossings) {
        crossings.push_back({{"link", c.link}, {"from", c.from}, {"to", c.to},
                             {"share", c.share}, {"held", c.held}});
      }
      paths.push_back({{"from", s.hosts[static_cast<size_t>(p.from)]},
                       {"to", s.hosts[static_cast<size_t>(p.to)]},
                       {"crossings", std::move(crossings)}});
    }
    j["paths"] = std::move(paths);
  }
  j["incast_gbps"] = s.incast_gbps;
  if (s.incast_send_gbps > 0) j["incast_send_gbps"] = s.incast_send_gbps;
  if (const double share = IncastSendShare(s, v.reference_gbps); share >= 0) {
    j["incast_send_share"] = share;
  }
  if (const std::string note = IncastSendNote(s, v); !note.empty()) j["incast_send_note"] = note;
  j["remeasured_alone"] = s.remeasured;
  j["slow_only_concurrently"] = s.contended;
  j["findings"] = nlohmann::json::array();
  for (const auto& f : v.findings) {
    nlohmann::json e = {{"kind", FindingName(f.kind)}, {"value", f.value},
                        {"expected", f.expected}, {"text", f.text}};
    if (f.host >= 0) e["host"] = s.hosts[static_cast<size_t>(f.host)];
    if (f.peer >= 0) e["peer"] = s.hosts[static_cast<size_t>(f.peer)];
    if (!f.link.empty()) e["link"] = f.link;
    if (!f.direction.empty()) e["direction"] = f.direction;
    if (!f.candidates.empty()) e["candidates"] = f.candidates;
    j["findings"].push_back(e);
  }
  return j;
}

}  // namespace genie::report
