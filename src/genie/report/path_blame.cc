#include "genie/report/path_blame.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "genie/report/bandwidth.h"

namespace genie::report {
namespace {

// A direction crossed a link when this share of its bytes did; a healthy direction clears a
// link it sent at least this much through (a trickle of ACKs clears nothing).
constexpr double kOnPath = 0.25;
constexpr double kClears = 0.5;
// A link end "clearly held" the slow transfers: their mean queue there summed to at least this
// many bytes, and this many times any other candidate link end's. (A leaf uplink at a quarter
// of 400 Mbit/s held 190-290 KB on average during each transfer through it; the ends around it
// held 0-7 bytes.)
constexpr double kMinHeld = 16 * 1024;
constexpr double kHeldRatio = 4;

struct Part {
  enum Kind { kLink, kTransmit, kReceive } kind;
  int host = -1;
  std::string link, from, to;
};

std::string Describe(const Part& p, const std::vector<std::string>& hosts) {
  if (p.kind == Part::kLink) return fmt::format("{} ({} -> {})", p.link, p.from, p.to);
  return hosts[static_cast<size_t>(p.host)] +
         (p.kind == Part::kTransmit ? "'s transmit side" : "'s receive side");
}

double MedianRate(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::string Rate(double gbps) { return FormatBandwidth(gbps) + " GB/s"; }

}  // namespace

PathVerdict BlamePaths(const DoctorScan& s, const std::function<bool(int, int)>& slow,
                       double slow_fraction, double reference) {
  const int n = static_cast<int>(s.hosts.size());
  const auto N = static_cast<size_t>(n);
  PathVerdict out;
  out.explained.assign(N, std::vector<bool>(N, false));
  if (s.paths.empty() || n < 2) return out;
  auto gbps = [&](int a, int b) {
    return static_cast<size_t>(a) < s.gbps.size() && static_cast<size_t>(b) < s.gbps[static_cast<size_t>(a)].size()
               ? s.gbps[static_cast<size_t>(a)][static_cast<size_t>(b)]
               : std::nan("");
  };
  std::vector<Part> parts;
  std::map<std::string, size_t> index;
  auto part = [&](Part p) {
    const std::string key = fmt::format("{}:{}:{}:{}:{}", static_cast<int>(p.kind), p.host,
                                         p.link, p.from, p.to);
    auto [it, fresh] = index.try_emplace(key, parts.size());
    if (fresh) parts.push_back(std::move(p));
    return it->second;
  };
  for (int h = 0; h < n; ++h) {
    part({Part::kTransmit, h, "", "", ""});
    part({Part::kReceive, h, "", "", ""});
  }
  // A direction through a link end whose transfers are, as a whole, slow against those that did
  // not cross it is judged against the latter. Where the hash put most pairs on one slow link
  // (8 of 9 across the leaves of a 2x2x3, that link slow both ways), the median transfer is
  // itself slow, and a direction judged only against its peers looks healthy and clears the
  // very link that slowed it. The medians of whole sets are a link's systematic effect, which
  // one noisy transfer does not make.
  std::map<std::string, std::vector<std::pair<int, int>>> on_link;  // link end -> directions
  auto end_key = [](const Crossing& c) { return c.link + ":" + c.from + ":" + c.to; };
  std::map<std::pair<int, int>, const TransferPath*> path_of;
  for (const auto& p : s.paths) {
    if (p.from < 0 || p.to < 0 || p.from >= n || p.to >= n || p.from == p.to) continue;
    if (std::isnan(gbps(p.from, p.to))) continue;
    path_of[{p.from, p.to}] = &p;
    for (const auto& c : p.crossings)
      if (c.share >= kOnPath) on_link[end_key(c)].push_back({p.from, p.to});
  }
  std::map<std::string, double> off_reference;  // suspect link end -> median rate off it
  for (const auto& [key, dirs] : on_link) {
    std::set<std::pair<int, int>> on(dirs.begin(), dirs.end());
    std::vector<double> on_rates, off_rates;
    for (int a = 0; a < n; ++a) {
      for (int b = 0; b < n; ++b) {
        if (a == b || std::isnan(gbps(a, b))) continue;
        (on.count({a, b}) ? on_rates : off_rates).push_back(gbps(a, b));
      }
    }
    const double off = MedianRate(off_rates);
    if (off_rates.size() >= 2 && MedianRate(on_rates) < slow_fraction * off) {
      off_reference[key] = off;
    }
  }
  auto judged_slow = [&](int a, int b) {
    if (slow(a, b)) return true;
    auto it = path_of.find({a, b});
    if (it == path_of.end()) return false;
    for (const auto& c : it->second->crossings) {
      auto r = off_reference.find(end_key(c));
      if (c.share >= kOnPath && r != off_reference.end() && gbps(a, b) < slow_fraction * r->second)
        return true;
    }
    return false;
  };

  auto tx = [&](int h) { return static_cast<size_t>(2 * h); };
  auto rx = [&](int h) { return static_cast<size_t>(2 * h + 1); };
  std::vector<bool> cleared(2 * N);
  // A healthy measured direction clears its hosts' sides, known path or not.
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b || std::isnan(gbps(a, b)) || judged_slow(a, b)) continue;
      cleared[tx(a)] = cleared[rx(b)] = true;
    }
  }
  struct Direction {
    int from, to;
    std::vector<size_t> parts;
    std::map<size_t, double> held;  // link part -> its end's mean queue meanwhile (bytes)
  };
  std::vector<Direction> slow_dirs;
  std::vector<std::pair<const TransferPath*, bool>> known;  // (path, healthy)
  for (const auto& p : s.paths) {
    if (p.from < 0 || p.to < 0 || p.from >= n || p.to >= n || p.from == p.to) continue;
    if (std::isnan(gbps(p.from, p.to))) continue;
    const bool is_slow = judged_slow(p.from, p.to);
    known.push_back({&p, !is_slow});
    Direction d{p.from, p.to, {tx(p.from), rx(p.to)}, {}};
    for (const auto& c : p.crossings) {
      const size_t i = part({Part::kLink, -1, c.link, c.from, c.to});
      if (cleared.size() < parts.size()) cleared.resize(parts.size());
      if (!is_slow && c.share >= kClears) cleared[i] = true;
      if (is_slow && c.share >= kOnPath) {
        d.parts.push_back(i);
        d.held[i] += c.held;
      }
    }
    if (is_slow) slow_dirs.push_back(std::move(d));
  }
  cleared.resize(parts.size());

  // Greedy cover of the slow directions by the parts no healthy direction cleared.
  std::vector<bool> covered(slow_dirs.size());
  struct Named {
    std::vector<size_t> parts;    // one: decided; several: the evidence cannot tell
    std::vector<size_t> directions;  // indices into slow_dirs
  };
  std::vector<Named> named;
  for (;;) {
    std::map<size_t, std::vector<size_t>> cover;  // part -> uncovered slow directions
    for (size_t d = 0; d < slow_dirs.size(); ++d) {
      if (covered[d]) continue;
      for (size_t p : slow_dirs[d].parts)
        if (!cleared[p]) cover[p].push_back(d);
    }
    if (cover.empty()) break;
    // Most directions first; on a tie a link before a host side (hosts have their own rules).
    auto better = [&](const auto& x, const auto& y) {
      if (x.second.size() != y.second.size()) return x.second.size() > y.second.size();
      const bool xl = parts[x.first].kind == Part::kLink, yl = parts[y.first].kind == Part::kLink;
      return xl != yl ? xl : x.first < y.first;
    };
    auto best = cover.begin();
    for (auto it = cover.begin(); it != cover.end(); ++it)
      if (better(*it, *best)) best = it;
    Named g{{}, best->second};
    for (const auto& [p, dirs] : cover)
      if (dirs == best->second) g.parts.push_back(p);
    std::stable_partition(g.parts.begin(), g.parts.end(),
                          [&](size_t p) { return parts[p].kind == Part::kLink; });
    for (size_t d : g.directions) covered[d] = true;
    // Links that carried the same slow directions: the one whose queue clearly held them.
    std::vector<std::pair<double, size_t>> held;
    for (size_t p : g.parts) {
      if (parts[p].kind != Part::kLink) continue;
      double h = 0;
      for (size_t d : g.directions) {
        auto it = slow_dirs[d].held.find(p);
        if (it != slow_dirs[d].held.end()) h += it->second;
      }
      held.push_back({h, p});
    }
    std::sort(held.rbegin(), held.rend());
    if (held.empty()) continue;  // host sides only: the host rules judge them
    if (held[0].first >= kMinHeld &&
        (held.size() == 1 || held[0].first >= kHeldRatio * held[1].first)) {
      g.parts = {held[0].second};
    }
    named.push_back(std::move(g));
  }

  // Sentences. A link is named per direction; both directions of one link make one finding.
  auto pair_list = [&](const std::vector<size_t>& dirs) {
    std::string list;
    for (size_t i = 0; i < dirs.size() && i < 4; ++i) {
      const auto& d = slow_dirs[dirs[i]];
      list += fmt::format("{}{} -> {} {}", i ? ", " : "", s.hosts[static_cast<size_t>(d.from)],
                          s.hosts[static_cast<size_t>(d.to)], Rate(gbps(d.from, d.to)));
    }
    if (dirs.size() > 4) list += fmt::format(" and {} more", dirs.size() - 4);
    return list;
  };
  auto median_of = [&](const std::vector<size_t>& dirs) {
    std::vector<double> r;
    for (size_t d : dirs) r.push_back(gbps(slow_dirs[d].from, slow_dirs[d].to));
    return MedianRate(r);
  };
  // The healthy transfers that left the link's first switch by another link, or reached its
  // second from another: what clears the switches themselves.
  auto healthy_beside = [&](const Part& l) {
    int left = 0, reached = 0;
    std::string example;
    for (const auto& [p, healthy] : known) {
      if (!healthy) continue;
      for (const auto& c : p->crossings) {
        if (c.share < kClears || c.link == l.link) continue;
        const bool o = c.from == l.from, i = c.to == l.to;
        if (!o && !i) continue;
        left += o;
        reached += i;
        if (example.empty()) {
          example = fmt::format(", e.g. {} -> {} by {} -> {}", s.hosts[static_cast<size_t>(p->from)],
                                s.hosts[static_cast<size_t>(p->to)], c.from, c.to);
        }
      }
    }
    return fmt::format("{} healthy transfer(s) left {} by another link and {} reached {} by "
                       "another{}",
                       left, l.from, reached, l.to, example);
  };
  std::vector<bool> emitted(named.size());
  for (size_t g = 0; g < named.size(); ++g) {
    if (emitted[g]) continue;
    emitted[g] = true;
    const Named& x = named[g];
    for (size_t d : x.directions) out.explained[static_cast<size_t>(slow_dirs[d].from)][static_cast<size_t>(slow_dirs[d].to)] = true;
    if (x.parts.size() == 1) {
      const Part& l = parts[x.parts[0]];
      // The other direction of the same link, named on its own too: one finding.
      std::vector<size_t> dirs = x.directions;
      std::string ways = fmt::format("{} -> {}", l.from, l.to);
      std::string evidence = healthy_beside(l);
      for (size_t o = g + 1; o < named.size(); ++o) {
        const Named& y = named[o];
        if (emitted[o] || y.parts.size() != 1) continue;
        const Part& m = parts[y.parts[0]];
        if (m.link != l.link) continue;
        emitted[o] = true;
        for (size_t d : y.directions) {
          dirs.push_back(d);
          out.explained[static_cast<size_t>(slow_dirs[d].from)][static_cast<size_t>(slow_dirs[d].to)] = true;
        }
        ways = "both ways";
        evidence += "; " + healthy_beside(m);
      }
      Finding f{FindingKind::kSlowUplink, -1, -1, median_of(dirs), reference,
                fmt::format("{} ({}): slow — {} transfer(s) through it at {} alone ({}), peers {}; "
                            "{} (check that port's speed, errors and ECMP membership)",
                            l.link, ways, dirs.size(), Rate(median_of(dirs)), pair_list(dirs),
                            Rate(reference), evidence)};
      f.link = l.link;
      f.direction = ways;
      out.findings.push_back(std::move(f));
      continue;
    }
    std::string choice;
    std::vector<std::string> candidates;
    for (size_t i = 0; i < x.parts.size(); ++i) {
      candidates.push_back(Describe(parts[x.parts[i]], s.hosts));
      choice += (i == 0 ? "" : i + 1 == x.parts.size() ? " or " : ", ") + candidates.back();
    }
    Finding f{FindingKind::kSlowPath, -1, -1, median_of(x.directions), reference,
              fmt::format("{}: slow — {} transfer(s) ({}), peers {}; only they crossed {}, so the "
                          "evidence cannot tell which (no healthy transfer crossed any of them, "
                          "and no link's queue clearly held them)",
                          choice, x.directions.size(), pair_list(x.directions), Rate(reference),
                          x.parts.size() == 2 ? "both" : "each")};
    f.candidates = std::move(candidates);
    out.findings.push_back(std::move(f));
  }
  return out;
}

}  // namespace genie::report
