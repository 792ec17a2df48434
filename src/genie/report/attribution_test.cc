#include "genie/report/attribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "genie/report/attribution_evidence.h"

namespace genie::report {
namespace {

constexpr TimeNs kMs = 1'000'000;

record::OpEvent Op(int rank, NodeId node, OpKind kind, TimeNs start, TimeNs end) {
  record::OpEvent e;
  e.rank = rank;
  e.iteration = 3;
  e.node = node;
  e.name = "n" + std::to_string(node);
  e.kind = kind;
  e.start = start;
  e.end = end;
  return e;
}

std::vector<const record::OpEvent*> Ptrs(const std::vector<record::OpEvent>& v) {
  std::vector<const record::OpEvent*> out;
  for (const auto& e : v) out.push_back(&e);
  return out;
}

// Four ranks of a 100 ms healthy step, each with 60 ms of compute.
AttributionInput Healthy(TimeNs measured) {
  AttributionInput in;
  in.iteration = 3;
  in.measured_ns = measured;
  in.expected_ns = 100 * kMs;
  in.with_compute_ns = 100 * kMs;
  for (int r = 0; r < 4; ++r) in.compute.push_back({r, 60 * kMs, 60 * kMs, 0});
  return in;
}

OpBehind Behind(TimeNs measured, TimeNs expected) {
  OpBehind op;
  op.iteration = 3;
  op.node = 42;
  op.name = "grad_allreduce";
  op.type = "all_reduce";
  op.ranks = {0, 1, 2, 3};
  op.measured_issue_ns = 10 * kMs;
  op.measured_end_ns = 10 * kMs + measured;
  op.expected_issue_ns = 10 * kMs;
  op.expected_end_ns = 10 * kMs + expected;
  return op;
}

std::vector<Cause> Causes(const IterationAttribution& a) {
  std::vector<Cause> out;
  for (const auto& c : a.causes) out.push_back(c.cause);
  return out;
}

void ExpectSharesSum(const IterationAttribution& a) {
  EXPECT_EQ(a.compute_ns + a.network_ns + a.contention_ns + a.rest_ns, a.excess_ns);
}

TEST(Attribution, AHealthyIterationNamesNothing) {
  AttributionInput in = Healthy(106 * kMs);  // the model's error, not a cause
  in.behind = {Behind(36 * kMs, 30 * kMs)};
  IterationAttribution a = Attribute(in);
  EXPECT_EQ(a.excess_ns, 6 * kMs);
  EXPECT_TRUE(a.causes.empty());
  ExpectSharesSum(a);
  // Faster than expected: no excess at all.
  EXPECT_TRUE(Attribute(Healthy(90 * kMs)).causes.empty());
  EXPECT_EQ(Attribute(Healthy(90 * kMs)).excess_ns, 0);
}

TEST(Attribution, AStragglerIsNamedWithItsExcessAndWhereTheOthersWaited) {
  AttributionInput in = Healthy(131 * kMs);
  in.compute[2].measured_ns = 90 * kMs;  // rank 2's compute 1.5x
  in.with_compute_ns = 130 * kMs;
  Wait w;
  w.late_rank = 2;
  w.type = "all_reduce";
  w.node = 42;
  w.name = "grad_allreduce";
  w.waiting = {0, 1, 3};
  w.wait_ns = 29 * kMs;
  in.waits = {w};
  in.behind = {Behind(31 * kMs, 30 * kMs)};  // the collective itself on time
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kStraggler});
  const CauseShare& s = a.causes[0];
  EXPECT_EQ(s.culprit, "rank 2");
  EXPECT_EQ(s.share_ns, 30 * kMs);
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].excess_ns(), 30 * kMs);
  ASSERT_TRUE(s.wait.has_value());
  EXPECT_EQ(s.wait->waiting, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(a.rest_ns, 1 * kMs);  // the model's error, under the floor
  ExpectSharesSum(a);
}

TEST(Attribution, AStallCountsAsTheRanksCompute) {
  AttributionInput in = Healthy(150 * kMs);
  in.compute[1].late_start_ns = 50 * kMs;
  in.with_compute_ns = 150 * kMs;
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kStraggler});
  EXPECT_EQ(a.causes[0].culprit, "rank 1");
  EXPECT_NE(a.causes[0].evidence[0].find("a stall"), std::string::npos);
}

TEST(Attribution, ASlowRankOffTheCriticalPathIsNotBlamed) {
  // Rank 3's compute grew, but the model with it predicts the same step: it had slack.
  AttributionInput in = Healthy(160 * kMs);
  in.compute[3].measured_ns = 80 * kMs;
  in.behind = {Behind(90 * kMs, 30 * kMs)};
  in.places = {{"slow_link", "h1", "h1: both directions slow"}};
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.network_ns, 60 * kMs);
}

TEST(Attribution, ASlowLinkIsTheNetworksWithItsPlace) {
  AttributionInput in = Healthy(400 * kMs);
  in.with_compute_ns = 101 * kMs;  // compute as traced, within noise
  in.behind = {Behind(330 * kMs, 30 * kMs)};
  in.places = {{"slow_transmit", "h2", "h2: transmit side slow — 10 % of what the others get"}};
  in.retransmits = {"h2: 120 segments sent again"};
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.causes[0].culprit, "h2: transmit side slow");
  EXPECT_EQ(a.network_ns, 299 * kMs);
  EXPECT_EQ(a.compute_ns, 1 * kMs);
  ASSERT_EQ(a.causes[0].ops.size(), 1u);
  ExpectSharesSum(a);
  // Without a localisation the op behind is the place.
  in.places.clear();
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_NE(a.causes[0].culprit.find("all_reduce node 42 on ranks 0-3"), std::string::npos)
      << a.causes[0].culprit;
}

TEST(Attribution, AStragglerAndASlowLinkAreBothNamedWithTheirShares) {
  AttributionInput in = Healthy(230 * kMs);
  in.compute[0].measured_ns = 100 * kMs;
  in.with_compute_ns = 140 * kMs;
  in.behind = {Behind(120 * kMs, 30 * kMs)};
  in.places = {{"slow_link", "h3", "h3: both directions slow"}};
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), (std::vector<Cause>{Cause::kNetwork, Cause::kStraggler}));
  EXPECT_EQ(a.network_ns, 90 * kMs);
  EXPECT_EQ(a.compute_ns, 40 * kMs);
  EXPECT_EQ(a.causes[1].culprit, "rank 0");
  ExpectSharesSum(a);
}

TEST(Attribution, ContentionIsTogetherMinusAloneNamingTheJobAndLinks) {
  AttributionInput in = Healthy(170 * kMs);
  in.contention = Contention{168 * kMs, 100 * kMs, {{"b", {"h1-s0", "s0-h2"}}}};
  in.behind = {Behind(95 * kMs, 30 * kMs)};  // the ops ran as predicted with the neighbour
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kContention});
  EXPECT_EQ(a.causes[0].culprit, "job b");
  EXPECT_EQ(a.contention_ns, 68 * kMs);
  EXPECT_NE(a.causes[0].evidence[0].find("links h1-s0, s0-h2"), std::string::npos);
  ExpectSharesSum(a);
  const nlohmann::json j = AttributionJson({a});
  EXPECT_EQ(j["iterations"][0]["causes"][0]["neighbours"][0]["job"], "b") << j.dump();
  // 9 % over the step predicted with the neighbour, its ops behind the job-alone prediction
  // by what the neighbour costs and a little more: the model's error, not the network.
  in.measured_ns = 183 * kMs;
  in.behind = {Behind(113 * kMs, 30 * kMs)};
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kContention}) << FormatAttribution({a});
  EXPECT_EQ(a.rest_ns, 15 * kMs);
  // Further over, but the ops behind only by what the neighbour explains: not the network's.
  in.measured_ns = 200 * kMs;
  in.behind = {Behind(100 * kMs, 30 * kMs)};
  a = Attribute(in);
  EXPECT_EQ(Causes(a), (std::vector<Cause>{Cause::kContention, Cause::kUnexplained}))
      << FormatAttribution({a});
  EXPECT_EQ(AttributionJson(AttributionFromJson(j)), j);
}

// Two jobs on 16 ranks of 2 cores: a rank waited for a core, and the probe after the run (a
// neighbour possibly still sending) found only slow pairs. That is not the network's; a host's
// side found slow is.
TEST(Attribution, AmongNeighboursSlowPairsAloneDoNotPlaceTheNetwork) {
  AttributionInput in = Healthy(210 * kMs);
  in.contention = Contention{160 * kMs, 100 * kMs, {{"b", {}}}};
  in.behind = {Behind(150 * kMs, 30 * kMs)};
  in.compute[1].cpu_wait_ns = 30 * kMs;
  in.places = {{"slow_pair", "h6", "h6 -> h5: slow"}};
  IterationAttribution a = Attribute(in);
  EXPECT_EQ(Causes(a), (std::vector<Cause>{Cause::kContention, Cause::kUnexplained}))
      << FormatAttribution({a});
  EXPECT_EQ(a.network_ns, 0);
  // The same pair without neighbours is still the network's.
  AttributionInput alone = in;
  alone.contention.reset();
  alone.measured_ns = 150 * kMs;
  EXPECT_EQ(Causes(Attribute(alone)), std::vector<Cause>{Cause::kNetwork});
  // A host's side found slow places it, neighbours or not.
  in.places = {{"slow_transmit", "h6", "h6: transmit side slow"}};
  a = Attribute(in);
  EXPECT_EQ(Causes(a), (std::vector<Cause>{Cause::kContention, Cause::kNetwork}))
      << FormatAttribution({a});
}

TEST(Attribution, AnExcessWithoutEvidenceIsUnexplained) {
  AttributionInput in = Healthy(200 * kMs);
  in.behind = {Behind(31 * kMs, 30 * kMs)};  // every op on time: not the network
  in.places = {{"slow_link", "h1", "h1: both directions slow"}};
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kUnexplained});
  EXPECT_EQ(a.rest_ns, 100 * kMs);
  EXPECT_EQ(a.network_ns, 0);
}

TEST(Attribution, CommBehindOnLinksTheProbeFoundHealthyIsUnexplained) {
  AttributionInput in = Healthy(200 * kMs);
  in.behind = {Behind(130 * kMs, 30 * kMs)};
  in.probed = true;  // and found nothing
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kUnexplained});
  EXPECT_NE(a.causes[0].evidence[0].find("found every link the job used healthy"),
            std::string::npos);
  // Retransmissions seen during the run: the network's after all.
  in.retransmits = {"h2: 900 of its 10000 TCP segments sent again"};
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  // Not probed: the ops behind are the network's, placed at the op.
  in.retransmits.clear();
  in.probed = false;
  EXPECT_EQ(Causes(Attribute(in)), std::vector<Cause>{Cause::kNetwork});
}

TEST(Attribution, CommBehindWhileARankWaitedForACoreIsTheHostsNotTheNetworks) {
  AttributionInput in = Healthy(200 * kMs);
  in.behind = {Behind(130 * kMs, 30 * kMs)};
  in.compute[2].cpu_wait_ns = 40 * kMs;  // 20 % of the step
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kUnexplained});
  EXPECT_NE(a.causes[0].evidence[0].find("rank 2 waited 40.000 ms for a core"), std::string::npos)
      << a.causes[0].evidence[0];
  // A localised fault still places it in the network.
  in.places = {{"slow_link", "h1", "h1: both directions slow"}};
  EXPECT_EQ(Causes(Attribute(in)), std::vector<Cause>{Cause::kNetwork});
  // A wait under 5 % of the step is noise.
  in.places.clear();
  in.compute[2].cpu_wait_ns = 5 * kMs;
  EXPECT_EQ(Causes(Attribute(in)), std::vector<Cause>{Cause::kNetwork});
}

// An iteration whose hosts counted retransmission timeouts is the network's: each a stall of
// 200 ms or more, which neither a straggler nor a rank waiting for a core produces.
TEST(Attribution, RetransmissionTimeoutsInTheIterationAreTheNetworks) {
  AttributionInput in = Healthy(500 * kMs);
  in.behind = {Behind(430 * kMs, 30 * kMs)};
  in.probed = true;                       // the probe, after the run, found every link healthy
  in.compute[2].cpu_wait_ns = 40 * kMs;   // and a rank waited for a core
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kUnexplained});
  in.timeouts = "2 TCP retransmission timeout(s) in this iteration (2 on rank 1's host), each a "
                "stall of 200 ms or more";
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.network_ns, 400 * kMs);
  const auto& ev = a.causes[0].evidence;
  EXPECT_NE(std::find(ev.begin(), ev.end(), in.timeouts), ev.end());
  // Without an op comparison the timeouts name the cause themselves.
  in.behind.clear();
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.causes[0].culprit, "retransmission timeouts");
  ExpectSharesSum(a);
}

// An iteration in which the connections held bbr's PROBE_RTT is the network's (its transport),
// even when the probe after the run found the links healthy; the probe names the cause only
// when no op behind does (the prediction has it where it was: what is left is more than it).
TEST(Attribution, BbrProbeRttInTheIterationIsTheTransports) {
  AttributionInput in = Healthy(500 * kMs);
  in.behind = {Behind(430 * kMs, 30 * kMs)};
  in.probed = true;
  IterationAttribution a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kUnexplained});
  in.probe_rtt = "bbr's PROBE_RTT: 16 connection(s) of ranks 0-7 held 4 packets in flight";
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_NE(a.causes[0].culprit.find("not localised"), std::string::npos) << a.causes[0].culprit;
  const auto& ev = a.causes[0].evidence;
  EXPECT_NE(std::find(ev.begin(), ev.end(), in.probe_rtt), ev.end());
  ExpectSharesSum(a);
  in.behind.clear();
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.causes[0].culprit, "bbr's PROBE_RTT (the transport)");
  // A placed fault still names its place first.
  in.places = {NetworkPlace{"slow_link", "h2", "h2: transmit side slow — 40 % of the median"}};
  in.probed = true;
  a = Attribute(in);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kNetwork});
  EXPECT_EQ(a.causes[0].culprit, "h2: transmit side slow");
}

TEST(Attribution, SharesNeverExceedTheExcess) {
  // The model with measured compute overshoots the measurement: compute takes all of it.
  AttributionInput in = Healthy(150 * kMs);
  in.compute[1].measured_ns = 130 * kMs;
  in.with_compute_ns = 170 * kMs;
  in.contention = Contention{140 * kMs, 100 * kMs, {}};
  IterationAttribution a = Attribute(in);
  EXPECT_EQ(a.compute_ns, 50 * kMs);
  EXPECT_EQ(a.contention_ns, 0);
  ExpectSharesSum(a);
  ASSERT_EQ(Causes(a), std::vector<Cause>{Cause::kStraggler});
}

TEST(Attribution, RoundTripsThroughJsonAndPrints) {
  AttributionInput in = Healthy(230 * kMs);
  in.compute[0].measured_ns = 100 * kMs;
  in.with_compute_ns = 140 * kMs;
  in.waits = {Wait{0, 3, "all_reduce", 42, "grad", kWorldGroup, {1, 2, 3}, 39 * kMs}};
  in.behind = {Behind(120 * kMs, 30 * kMs)};
  in.places = {{"slow_link", "h3", "h3: both directions slow"}};
  const std::vector<IterationAttribution> a = {Attribute(in)};
  const nlohmann::json j = AttributionJson(a);
  EXPECT_EQ(j["iterations"][0]["causes"][0]["cause"], "network");
  EXPECT_EQ(j["iterations"][0]["causes"][1]["waited_in"]["waiting"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(j["iterations"][0]["excess"]["compute_ns"], 40 * kMs);
  const auto back = AttributionFromJson(j);
  EXPECT_EQ(AttributionJson(back), j);
  EXPECT_EQ(FormatAttribution(back), FormatAttribution(a));
  const std::string text = FormatAttribution(a);
  EXPECT_NE(text.find("network"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 0"), std::string::npos) << text;
  EXPECT_EQ(FormatAttribution({}), "");
  EXPECT_TRUE(AttributionFromJson(nlohmann::json("junk")).empty());
}

TEST(AttributionEvidence, ComputeIsTheUnionOfOverlappingSpansAndItsPartsAddUp) {
  // Op 1 was noticed 2 ms late; op 2, queued behind it, started when op 1 was due.
  std::vector<record::OpEvent> ops = {
      Op(0, 1, OpKind::kCompute, 0, 12 * kMs), Op(0, 2, OpKind::kCompute, 10 * kMs, 15 * kMs),
      Op(0, 3, OpKind::kCollective, 15 * kMs, 30 * kMs), Op(1, 1, OpKind::kCompute, 0, 10 * kMs)};
  ops.push_back(Op(1, 9, OpKind::kCompute, 0, 50 * kMs));
  ops.back().is_cpu_op = true;  // the host's, not the GPU's
  const auto u = ComputeUnion(Ptrs(ops));
  EXPECT_EQ(u.at(0), 15 * kMs);
  EXPECT_EQ(u.at(1), 10 * kMs);
  const auto d = EffectiveComputeDurations(Ptrs(ops));
  EXPECT_EQ(d.at(0).at(1), 12 * kMs);
  EXPECT_EQ(d.at(0).at(2), 3 * kMs);
  EXPECT_EQ(d.at(1).size(), 1u);
}

TEST(AttributionEvidence, TheCollectiveTheOthersWaitedInLongestIsFound) {
  std::vector<record::OpEvent> ops;
  // Two all-reduces of the world group; rank 2 issues both late, the second 30 ms late. Rank
  // 2's node ids differ from the others' (matched by position, as the runtime matches them).
  for (int r = 0; r < 3; ++r) {
    const NodeId base = r == 2 ? 100 : 10;
    const TimeNs late1 = r == 2 ? 5 * kMs : 0, late2 = r == 2 ? 30 * kMs : 0;
    ops.push_back(Op(r, base, OpKind::kCollective, 10 * kMs + late1, 20 * kMs + late1));
    ops.push_back(Op(r, base + 1, OpKind::kCollective, 40 * kMs + late2, 50 * kMs + late2));
  }
  const auto w = CollectiveWaits(Ptrs(ops));
  ASSERT_EQ(w.count(2), 1u);
  EXPECT_EQ(w.at(2).node, 101);
  EXPECT_EQ(w.at(2).wait_ns, 30 * kMs);
  EXPECT_EQ(w.at(2).waiting, (std::vector<int>{0, 1}));

  std::vector<record::RankSummary> s = {{0, 3, 0, 60 * kMs}, {2, 3, 0, 80 * kMs}};
  const auto delays = FirstOpDelays(Ptrs(ops), {&s[0], &s[1]});
  EXPECT_EQ(delays.at(0), 10 * kMs);
  EXPECT_EQ(delays.at(2), 15 * kMs);
}

}  // namespace
}  // namespace genie::report
