#include "genie/report/attribution.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "genie/record/cpu_wait.h"
#include "genie/report/completeness.h"

namespace genie::report {
namespace {

TimeNs Clamp(TimeNs v, TimeNs hi) { return std::clamp<TimeNs>(v, 0, std::max<TimeNs>(0, hi)); }

std::string RankList(const std::vector<int>& ranks) {
  Ranges r;
  for (int x : ranks) {
    if (!r.empty() && r.back().second + 1 == x) {
      r.back().second = x;
    } else {
      r.emplace_back(x, x);
    }
  }
  return FormatRanges(r);
}

// The ranks whose compute exceeded the trace by the floor (most first), or else the one that
// exceeded it most: a compute share above the floor spread thinly over many ranks still has a
// largest contributor.
CauseShare Straggler(const AttributionInput& in, TimeNs share, TimeNs floor_ns) {
  CauseShare c;
  c.cause = Cause::kStraggler;
  c.share_ns = share;
  std::vector<RankCompute> ranks = in.compute;
  std::sort(ranks.begin(), ranks.end(), [](const RankCompute& a, const RankCompute& b) {
    return std::make_pair(-a.excess_ns(), a.rank) < std::make_pair(-b.excess_ns(), b.rank);
  });
  for (const RankCompute& r : ranks) {
    if (r.excess_ns() >= floor_ns || (c.ranks.empty() && r.excess_ns() > 0)) c.ranks.push_back(r);
  }
  if (c.ranks.empty()) {
    c.culprit = "compute";
    c.evidence.push_back("with each rank's measured compute the model predicts " +
                         FormatDuration(*in.with_compute_ns) + ", not " +
                         FormatDuration(in.expected_ns));
    return c;
  }
  std::vector<int> named;
  for (const RankCompute& r : c.ranks) named.push_back(r.rank);
  c.culprit = (named.size() == 1 ? "rank " : "ranks ") + RankList(named);
  for (const RankCompute& r : c.ranks) {
    std::string s = fmt::format("rank {}: compute {} against the trace's {} ({}{})", r.rank,
                                FormatDuration(r.measured_ns), FormatDuration(r.trace_ns),
                                r.measured_ns >= r.trace_ns ? "+" : "",
                                FormatDuration(r.measured_ns - r.trace_ns));
    if (r.late_start_ns > 0 && r.late_start_ns >= floor_ns / 4) {
      s += fmt::format(", and its first op {} after its iteration began (a stall)",
                       FormatDuration(r.late_start_ns));
    }
    if (r.cpu_wait_ns > 0 && r.cpu_wait_ns >= floor_ns / 4) {
      s += fmt::format("; its thread waited {} for a core (CPU-starved)",
                       FormatDuration(r.cpu_wait_ns));
    }
    c.evidence.push_back(std::move(s));
  }
  for (const Wait& w : in.waits) {
    if (w.late_rank != c.ranks.front().rank || w.wait_ns <= 0) continue;
    c.wait = w;
    c.evidence.push_back(fmt::format(
        "its lateness reached the others in {} node {} ({}): rank{} {} issued it up to {} before "
        "rank {} did",
        w.type, w.node, w.name, w.waiting.size() == 1 ? "" : "s", RankList(w.waiting),
        FormatDuration(w.wait_ns), w.late_rank));
  }
  if (in.with_compute_ns) {
    c.evidence.push_back("the model with the measured compute predicts " +
                         FormatDuration(*in.with_compute_ns) + " where the trace's gives " +
                         FormatDuration(in.expected_ns));
  }
  return c;
}

CauseShare Network(const AttributionInput& in, TimeNs share) {
  CauseShare c;
  c.cause = Cause::kNetwork;
  c.share_ns = share;
  c.places = in.places;
  for (const OpBehind& op : in.behind) {
    if (op.added_ns() > 0) c.ops.push_back(op);
  }
  if (!in.places.empty()) {
    // The finding's headline ("h2: transmit side slow"); its whole sentence is evidence.
    for (const NetworkPlace& p : in.places) {
      c.culprit += (c.culprit.empty() ? "" : "; ") + p.text.substr(0, p.text.find(" — "));
      if (p.text.find(" — ") != std::string::npos) c.evidence.push_back(p.text);
    }
  } else if (!c.ops.empty()) {
    const OpBehind& op = c.ops.front();
    c.culprit = fmt::format("{} node {} on rank{} {} (not localised: run with --localize)", op.type,
                            op.node, op.ranks.size() == 1 ? "" : "s", RankList(op.ranks));
  } else if (!in.timeouts.empty()) {
    c.culprit = "retransmission timeouts";
  } else if (!in.probe_rtt.empty()) {
    // The prediction has the probe where it was: an iteration still flagged was slowed by more
    // than it, so it names the cause only when nothing else does.
    c.culprit = "bbr's PROBE_RTT (the transport)";
  } else {
    c.culprit = in.retransmits.empty()
                    ? "the network"
                    : in.retransmits.front().substr(0, in.retransmits.front().find(':')) +
                          ": retransmissions";
  }
  for (const OpBehind& op : c.ops) {
    if (c.evidence.size() >= 3) break;
    c.evidence.push_back(fmt::format(
        "{} node {} ({}, ranks {}) took {} from its last rank's issue, {:.2f}x its prediction",
        op.type, op.node, op.name, RankList(op.ranks), FormatDuration(op.measured_ns()),
        op.ratio()));
  }
  if (!in.timeouts.empty()) c.evidence.push_back(in.timeouts);
  if (!in.probe_rtt.empty()) c.evidence.push_back(in.probe_rtt);
  for (const std::string& r : in.retransmits) c.evidence.push_back(r);
  return c;
}

CauseShare ContentionShare(const Contention& k, TimeNs share) {
  CauseShare c;
  c.cause = Cause::kContention;
  c.share_ns = share;
  c.neighbours = k.neighbours;
  for (const Neighbour& n : k.neighbours) {
    c.culprit += (c.culprit.empty() ? "job " : ", job ") + n.job;
    c.evidence.push_back("job " + n.job + " shares " +
                         (n.links.empty() ? std::string("the fabric")
                                          : fmt::format("links {}", fmt::join(n.links, ", "))));
  }
  if (c.culprit.empty()) c.culprit = "another job";
  c.evidence.push_back("the model predicts this step " + FormatDuration(k.together_ns) +
                       " with its neighbours, " + FormatDuration(k.alone_ns) + " alone");
  return c;
}

}  // namespace

const char* CauseName(Cause cause) {
  switch (cause) {
    case Cause::kStraggler:
      return "straggler";
    case Cause::kNetwork:
      return "network";
    case Cause::kContention:
      return "contention";
    case Cause::kUnexplained:
      return "unexplained";
  }
  return "unexplained";
}

IterationAttribution Attribute(const AttributionInput& in, double floor) {
  IterationAttribution a;
  a.iteration = in.iteration;
  a.measured_ns = in.measured_ns;
  a.expected_ns = in.expected_ns;
  a.with_compute_ns = in.with_compute_ns;
  a.floor = floor;
  a.excess_ns = std::max<TimeNs>(0, in.measured_ns - in.expected_ns);
  // The floor is a share of the step the model expects, with the neighbours when there are
  // any: its error grows with what it predicts.
  const TimeNs neighbours_ns =
      in.contention ? std::max<TimeNs>(0, in.contention->together_ns - in.contention->alone_ns) : 0;
  const TimeNs floor_ns =
      static_cast<TimeNs>(floor * static_cast<double>(in.expected_ns + neighbours_ns));

  // Compute: the counterfactual when it could be run; else at most the rank most behind its
  // trace (a rank's lateness reaches the step at most one for one).
  TimeNs compute = 0;
  if (in.with_compute_ns) {
    compute = *in.with_compute_ns - in.expected_ns;
  } else {
    for (const RankCompute& r : in.compute) compute = std::max(compute, r.excess_ns());
  }
  a.compute_ns = Clamp(compute, a.excess_ns);
  if (in.contention) {
    a.contention_ns =
        Clamp(in.contention->together_ns - in.contention->alone_ns, a.excess_ns - a.compute_ns);
  }
  const TimeNs rest = a.excess_ns - a.compute_ns - a.contention_ns;

  // The network's when the measurement shows it behind: the ops behind their prediction add
  // up to half the rest, or (no op comparison for this iteration) a place or retransmissions.
  // The ops are compared with this job alone, so what the neighbours explain is not theirs.
  TimeNs behind = -a.contention_ns;
  for (const OpBehind& op : in.behind) behind += std::max<TimeNs>(0, op.added_ns());
  const bool comm_behind = !in.behind.empty() && behind > 0 && 2 * behind >= rest;
  // The transport's own evidence: losses, and bbr's periodic PROBE_RTT.
  const bool transport_quiet =
      in.retransmits.empty() && in.timeouts.empty() && in.probe_rtt.empty();
  const bool links_healthy = in.probed && in.places.empty() && transport_quiet;
  // A rank that waited for a core read its sockets late: comm behind is then the host's,
  // unless the network is placed.
  const RankCompute* starved = nullptr;
  for (const RankCompute& r : in.compute) {
    if (static_cast<double>(r.cpu_wait_ns) >
            record::kNotableCpuWaitFraction * static_cast<double>(in.measured_ns) &&
        (starved == nullptr || r.cpu_wait_ns > starved->cpu_wait_ns)) {
      starved = &r;
    }
  }
  // Among neighbours, slow *pairs* alone are weak evidence: the probe runs after this job's
  // iterations while a neighbour may still be sending through the same hosts. Only a host's
  // side or link, a switch link, or retransmissions place the network there.
  const bool pairs_only =
      !in.places.empty() && std::all_of(in.places.begin(), in.places.end(), [](const auto& p) {
        return p.kind == "slow_pair" || p.kind == "high_latency_pair";
      });
  const bool unplaced =
      (in.places.empty() || (in.contention.has_value() && pairs_only)) && transport_quiet;
  const bool evidence = in.behind.empty()
                            ? !unplaced
                            : comm_behind && !links_healthy && !(starved != nullptr && unplaced);
  if (evidence && rest >= floor_ns && rest > 0) {
    a.network_ns = rest;
  } else {
    a.rest_ns = rest;
  }

  if (a.compute_ns > 0 && a.compute_ns >= floor_ns) {
    a.causes.push_back(Straggler(in, a.compute_ns, floor_ns));
  }
  if (a.contention_ns > 0 && a.contention_ns >= floor_ns) {
    a.causes.push_back(ContentionShare(*in.contention, a.contention_ns));
  }
  if (a.network_ns > 0) a.causes.push_back(Network(in, a.network_ns));
  if (a.rest_ns > 0 && a.rest_ns >= floor_ns) {
    CauseShare u;
    u.cause = Cause::kUnexplained;
    u.share_ns = a.rest_ns;
    if (comm_behind && starved != nullptr && unplaced) {
      u.evidence.push_back(fmt::format(
          "communication was behind its prediction, but rank {} waited {} for a core in this "
          "iteration ({:.0f} % of the step): the host's CPU read its sockets late, not the network",
          starved->rank, FormatDuration(starved->cpu_wait_ns),
          100.0 * static_cast<double>(starved->cpu_wait_ns) / static_cast<double>(in.measured_ns)));
    } else if (comm_behind && links_healthy) {
      const OpBehind& op = in.behind.front();
      u.evidence.push_back(fmt::format(
          "communication was behind its prediction ({} node {} on ranks {}: {:.2f}x), but the "
          "probe after the run found every link the job used healthy and no retransmissions: "
          "the hosts' scheduling, or a fault gone before the probe",
          op.type, op.node, RankList(op.ranks), op.ratio()));
    } else {
      u.evidence.push_back(
          "neither the ranks' measured compute nor the neighbours' predicted traffic accounts "
          "for it, and no op was behind its prediction by that much");
    }
    a.causes.push_back(std::move(u));
  }
  std::stable_sort(a.causes.begin(), a.causes.end(), [](const CauseShare& x, const CauseShare& y) {
    return x.share_ns > y.share_ns;
  });
  return a;
}

namespace {

nlohmann::json RankJson(const RankCompute& r) {
  return {{"rank", r.rank},
          {"measured_compute_ns", r.measured_ns},
          {"trace_compute_ns", r.trace_ns},
          {"late_start_ns", r.late_start_ns},
          {"cpu_wait_ns", r.cpu_wait_ns},
          {"compute_excess_ns", r.excess_ns()}};
}

RankCompute RankFromJson(const nlohmann::json& j) {
  RankCompute r;
  r.rank = j.value("rank", 0);
  r.measured_ns = j.value("measured_compute_ns", TimeNs{0});
  r.trace_ns = j.value("trace_compute_ns", TimeNs{0});
  r.late_start_ns = j.value("late_start_ns", TimeNs{0});
  r.cpu_wait_ns = j.value("cpu_wait_ns", TimeNs{0});
  return r;
}

nlohmann::json CauseJson(const CauseShare& c, TimeNs excess) {
  nlohmann::json j = {
      {"cause", CauseName(c.cause)},
      {"share_ns", c.share_ns},
      {"share", excess > 0 ? static_cast<double>(c.share_ns) / static_cast<double>(excess) : 0.0},
      {"culprit", c.culprit},
      {"evidence", c.evidence}};
  if (!c.ranks.empty()) {
    j["ranks"] = nlohmann::json::array();
    for (const RankCompute& r : c.ranks) j["ranks"].push_back(RankJson(r));
  }
  if (c.wait) {
    j["waited_in"] = {{"late_rank", c.wait->late_rank}, {"type", c.wait->type},
                      {"node", c.wait->node},           {"name", c.wait->name},
                      {"group", c.wait->group},         {"waiting", c.wait->waiting},
                      {"wait_ns", c.wait->wait_ns}};
  }
  if (!c.places.empty()) {
    j["places"] = nlohmann::json::array();
    for (const NetworkPlace& p : c.places) {
      j["places"].push_back({{"kind", p.kind}, {"host", p.host}, {"text", p.text}});
    }
  }
  if (!c.ops.empty()) {
    j["ops_behind"] = nlohmann::json::array();
    for (const OpBehind& op : c.ops) j["ops_behind"].push_back(ToJson(op));
  }
  if (!c.neighbours.empty()) {
    j["neighbours"] = nlohmann::json::array();
    for (const Neighbour& n : c.neighbours)
      j["neighbours"].push_back({{"job", n.job}, {"links", n.links}});
  }
  return j;
}

CauseShare CauseFromJson(const nlohmann::json& j) {
  CauseShare c;
  const std::string name = j.value("cause", "");
  for (Cause k : {Cause::kStraggler, Cause::kNetwork, Cause::kContention, Cause::kUnexplained}) {
    if (name == CauseName(k)) c.cause = k;
  }
  c.share_ns = j.value("share_ns", TimeNs{0});
  c.culprit = j.value("culprit", "");
  if (j.contains("evidence") && j["evidence"].is_array()) {
    for (const auto& e : j["evidence"]) {
      if (e.is_string()) c.evidence.push_back(e.get<std::string>());
    }
  }
  for (const auto& r : j.value("ranks", nlohmann::json::array()))
    c.ranks.push_back(RankFromJson(r));
  if (j.contains("waited_in") && j["waited_in"].is_object()) {
    const nlohmann::json& w = j["waited_in"];
    Wait wait;
    wait.late_rank = w.value("late_rank", -1);
    wait.type = w.value("type", "");
    wait.node = w.value("node", NodeId{0});
    wait.name = w.value("name", "");
    wait.group = w.value("group", int64_t{kWorldGroup});
    wait.waiting = w.value("waiting", std::vector<int>{});
    wait.wait_ns = w.value("wait_ns", TimeNs{0});
    c.wait = wait;
  }
  for (const auto& p : j.value("places", nlohmann::json::array())) {
    c.places.push_back({p.value("kind", ""), p.value("host", ""), p.value("text", "")});
  }
  for (const auto& op : j.value("ops_behind", nlohmann::json::array())) {
    c.ops.push_back(OpBehindFromJson(op));
  }
  for (const auto& n : j.value("neighbours", nlohmann::json::array())) {
    c.neighbours.push_back({n.value("job", ""), n.value("links", std::vector<std::string>{})});
  }
  return c;
}

}  // namespace

nlohmann::json AttributionJson(const std::vector<IterationAttribution>& iterations) {
  nlohmann::json out = {
      {"baseline",
       "the healthy expectation: the trace's compute, no faults, this job alone, with the "
       "iteration's measured start skew"},
      {"floor", iterations.empty() ? kAttributionFloor : iterations.front().floor},
      {"iterations", nlohmann::json::array()}};
  for (const IterationAttribution& a : iterations) {
    nlohmann::json j = {{"iteration", a.iteration},
                        {"measured_step_ns", a.measured_ns},
                        {"expected_step_ns", a.expected_ns},
                        {"excess_ns", a.excess_ns},
                        {"excess",
                         {{"compute_ns", a.compute_ns},
                          {"network_ns", a.network_ns},
                          {"contention_ns", a.contention_ns},
                          {"rest_ns", a.rest_ns}}},
                        {"causes", nlohmann::json::array()}};
    if (a.with_compute_ns) j["with_measured_compute_ns"] = *a.with_compute_ns;
    for (const CauseShare& c : a.causes) j["causes"].push_back(CauseJson(c, a.excess_ns));
    out["iterations"].push_back(std::move(j));
  }
  return out;
}

std::vector<IterationAttribution> AttributionFromJson(const nlohmann::json& j) {
  std::vector<IterationAttribution> out;
  if (!j.is_object() || !j.contains("iterations") || !j["iterations"].is_array()) return out;
  const double floor = j.value("floor", kAttributionFloor);
  for (const auto& it : j["iterations"]) {
    if (!it.is_object()) continue;
    IterationAttribution a;
    a.floor = floor;
    a.iteration = it.value("iteration", 0);
    a.measured_ns = it.value("measured_step_ns", TimeNs{0});
    a.expected_ns = it.value("expected_step_ns", TimeNs{0});
    a.excess_ns = it.value("excess_ns", TimeNs{0});
    if (it.contains("with_measured_compute_ns")) {
      a.with_compute_ns = it.value("with_measured_compute_ns", TimeNs{0});
    }
    const nlohmann::json excess = it.value("excess", nlohmann::json::object());
    a.compute_ns = excess.value("compute_ns", TimeNs{0});
    a.network_ns = excess.value("network_ns", TimeNs{0});
    a.contention_ns = excess.value("contention_ns", TimeNs{0});
    a.rest_ns = excess.value("rest_ns", TimeNs{0});
    for (const auto& c : it.value("causes", nlohmann::json::array())) {
      if (c.is_object()) a.causes.push_back(CauseFromJson(c));
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string FormatAttribution(const std::vector<IterationAttribution>& iterations) {
  if (iterations.empty()) return "";
  std::string out = fmt::format(
      "# who slowed the step: each iteration flagged slow, its excess over the healthy "
      "expectation (trace compute, no faults, this job alone) and each cause's share "
      "(causes under {:.0f} % of the step are not named)\n",
      100 * iterations.front().floor);
  for (const IterationAttribution& a : iterations) {
    out += fmt::format("  iteration {}: measured {}, expected {}, excess {}", a.iteration,
                       FormatDuration(a.measured_ns), FormatDuration(a.expected_ns),
                       FormatDuration(a.excess_ns));
    if (a.causes.empty()) {
      out += ": nothing named (every cause under the floor)\n";
      continue;
    }
    out += "\n";
    for (const CauseShare& c : a.causes) {
      const double share = a.excess_ns > 0 ? 100.0 * static_cast<double>(c.share_ns) /
                                                 static_cast<double>(a.excess_ns)
                                           : 0.0;
      out += fmt::format("    {:<11} {:>3.0f} %  {:>10}  {}\n", CauseName(c.cause), share,
                         FormatDuration(c.share_ns), c.culprit);
      for (const std::string& e : c.evidence) out += "        " + e + "\n";
    }
  }
  return out;
}

}  // namespace genie::report
