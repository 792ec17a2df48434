// Fault schedules, their expansion in time, and the commands each fault becomes (recorded,
// not run: no root needed).
#include "genie/testbed/fault.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "genie/testbed/fault_runner.h"
#include "genie/testbed/injector.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/spec.h"

namespace genie::testbed {
namespace {

Layout Star(int hosts) {
  TestbedSpec s;
  s.name = "tb";
  s.hosts = hosts;
  s.rate_bps = 400'000'000;
  auto l = LayOut(s);
  EXPECT_TRUE(l.ok());
  return *l;
}

std::vector<std::string> Texts(const RecordingShell& shell) {
  std::vector<std::string> out;
  for (const auto& c : shell.commands) out.push_back(ToString(c));
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(FaultSchedule, ParsesEveryKindAndTiming) {
  auto s = ParseFaultSchedule(
      "testbed: lab\nfaults:\n"
      "  - {at: 2s, link: h3, rate: 200mbit, direction: out, for: 5s}\n"
      "  - {iteration: 3, link: h1, loss: 1%}\n"
      "  - {link: h2, delay: 5ms, jitter: 1ms}\n"
      "  - {at: 1s, link: h0, down: 2s}\n"
      "  - {link: h4, flap: 3, period: 500ms}\n"
      "  - {link: h5, queue: 64KB, direction: in}\n",
      "f.yml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->testbed, "lab");
  ASSERT_EQ(s->faults.size(), 6u);
  EXPECT_EQ(s->faults[0].kind, FaultKind::kRate);
  EXPECT_EQ(s->faults[0].at, 2 * kNsPerSec);
  EXPECT_EQ(s->faults[0].duration, 5 * kNsPerSec);
  EXPECT_EQ(s->faults[0].direction, Direction::kOut);
  EXPECT_EQ(s->faults[1].iteration, 3);
  EXPECT_DOUBLE_EQ(s->faults[1].loss, 0.01);
  EXPECT_EQ(s->faults[2].jitter, kNsPerMs);
  EXPECT_EQ(s->faults[3].kind, FaultKind::kDown);
  EXPECT_EQ(s->faults[3].duration, 2 * kNsPerSec);
  EXPECT_EQ(s->faults[4].flaps, 3);
  EXPECT_EQ(s->faults[5].queue_bytes, 64'000u);
  EXPECT_EQ(s->faults[0].Describe(), "h3 out: rate 200mbit for 5.000 s");
}

TEST(FaultSchedule, MistakesNameTheFaultAndTheKey) {
  auto check = [](const std::string& text, const std::string& want) {
    auto s = ParseFaultSchedule(text, "f.yml");
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(want), std::string::npos) << s.status().message();
  };
  check("faults:\n  - {link: h3, rate: 1gbit, loss: 1%}\n", "f.yml: fault 1: say exactly one");
  check("faults:\n  - {link: h3, rate: 1gbit}\n  - {link: h3, colour: red}\n",
        "fault 2: unknown key 'colour'");
  check("faults:\n  - {link: h3, loss: 150%}\n", "between 0% and 100%");
  check("faults:\n  - {link: h3, rate: 200gbit}\n", "h3: rate above 100gbit");
  check("faults:\n  - {link: h3, delay: 5ms, jitter: 10ms}\n", "jitter");
  check("faults:\n  - {link: h3, direction: up, down: true}\n", "direction 'up'");
  check("links: []\n", "expected `faults:`");
  check("faults:\n  - {link: h3, rank: 1, compute: 2x}\n", "fault 1: both link and rank");
  check("faults:\n  - {rate: 1gbit}\n", "or a rank for a compute fault");
}

// A rank's entries are compute faults (compute/compute_fault.h): counted, left to that reader.
TEST(FaultSchedule, LeavesComputeFaultsToTheirReader) {
  auto s = ParseFaultSchedule(
      "faults:\n  - {rank: 3, compute: 1.5x}\n  - {link: h1, loss: 1%}\n"
      "  - {rank: all, jitter: {sd: 10%, seed: 7}}\n",
      "f.yml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->faults.size(), 1u);
  EXPECT_EQ(s->faults[0].link, "h1");
  EXPECT_EQ(s->compute_faults, 2);
}

TEST(FaultExpand, TimedFaultsBecomeApplyAndUndo) {
  Fault down;
  down.kind = FaultKind::kDown;
  down.link = "h1";
  down.duration = 2 * kNsPerSec;
  auto a = Expand(down);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_FALSE(a[0].undo);
  EXPECT_TRUE(a[1].undo);
  EXPECT_EQ(a[1].offset, 2 * kNsPerSec);
  Fault flap = down;
  flap.kind = FaultKind::kFlap;
  flap.flaps = 3;
  flap.period = kNsPerSec;
  a = Expand(flap);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[5].offset, 2500 * kNsPerMs);
  EXPECT_TRUE(a[5].undo);
  EXPECT_EQ(a[4].fault.kind, FaultKind::kDown);
}

TEST(Injector, EachFaultTouchesTheRightEnd) {
  RecordingShell shell;
  Injector inj(Star(4), shell, "/bin/genie");
  Fault rate;
  rate.kind = FaultKind::kRate;
  rate.link = "h3";
  rate.rate_bps = 100'000'000;
  rate.direction = Direction::kOut;  // from the host: its NIC's egress
  ASSERT_TRUE(inj.Apply(rate).ok());
  EXPECT_TRUE(Has(Texts(shell), "tc -n tb-h3 qdisc replace dev eth0 root tbf rate 100000000bit "
                                "burst 131072 limit 2000000"));
  // One direction only: the host's tbf and the two FIFOs of its ACK-first htb.
  EXPECT_EQ(shell.commands.size(), 3u);
  shell.commands.clear();
  ASSERT_TRUE(inj.Undo(rate).ok());
  EXPECT_TRUE(Has(Texts(shell), "tc -n tb-h3 qdisc replace dev eth0 root tbf rate 400000000bit "
                                "burst 131072 limit 2000000"));

  shell.commands.clear();
  Fault loss;
  loss.kind = FaultKind::kLoss;
  loss.link = "h1";
  loss.loss = 0.02;
  loss.direction = Direction::kIn;  // to the host: dropped as it arrives there
  ASSERT_TRUE(inj.Apply(loss).ok());
  EXPECT_TRUE(Has(Texts(shell), "ip netns exec tb-h1 iptables -w -t mangle -A PREROUTING -i eth0 "
                                "-m statistic --mode random --probability 0.020000 -j DROP"));
  // Frames dropped about one at a time: the end sending into the rule cuts GSO packets.
  EXPECT_TRUE(Has(Texts(shell), "ip -n tb-sw link set h1n0 gso_max_segs 2"));
  shell.commands.clear();
  loss.direction = Direction::kOut;  // from the host: at the switch port, through br_netfilter
  ASSERT_TRUE(inj.Apply(loss).ok());
  auto t = Texts(shell);
  EXPECT_TRUE(Has(t, "ip netns exec tb-sw sysctl -q -w net.bridge.bridge-nf-call-iptables=1"));
  EXPECT_TRUE(Has(t, "ip netns exec tb-sw iptables -w -t mangle -A PREROUTING -m physdev "
                     "--physdev-in h1n0 -m statistic --mode random --probability 0.020000 -j DROP"));
  EXPECT_TRUE(Has(t, "ip -n tb-h1 link set eth0 gso_max_segs 2"));
  shell.commands.clear();
  ASSERT_TRUE(inj.Undo(loss).ok());
  EXPECT_TRUE(Has(Texts(shell), "ip -n tb-h1 link set eth0 gso_max_segs 65535"));

  shell.commands.clear();
  Fault down;
  down.kind = FaultKind::kDown;
  down.link = "h2";
  ASSERT_TRUE(inj.Apply(down).ok());
  // The switch side goes down: the host keeps its addresses and routes.
  EXPECT_EQ(Texts(shell), std::vector<std::string>{"ip -n tb-sw link set h2n0 down"});

  Fault nowhere = down;
  nowhere.link = "h9";
  Status st = inj.Apply(nowhere);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no link 'h9' (its links: h0, h1, h2, h3)"), std::string::npos)
      << st.message();
}

// A rate fault on a spine link shared per sending host changes the htb's classes in place: the
// root and its filters stay, every class gets its part of the new rate.
TEST(Injector, ARateFaultOnAPerHostSpineLinkChangesItsClasses) {
  TestbedSpec s;
  s.name = "tb";
  ASSERT_TRUE(ParseTopology("leafspine:2x1x2", &s).ok());
  s.rate_bps = 400'000'000;
  auto layout = LayOut(s);
  ASSERT_TRUE(layout.ok());
  RecordingShell shell;
  Injector inj(*layout, shell, "/bin/genie");
  Fault rate;
  rate.kind = FaultKind::kRate;
  rate.link = "l0-s0";
  rate.rate_bps = 90'000'000;
  rate.direction = Direction::kOut;  // leaf 0's uplink
  ASSERT_TRUE(inj.Apply(rate).ok());
  auto t = Texts(shell);
  EXPECT_TRUE(Has(t, "tc -n tb-l0 class replace dev s0 parent 1: classid 1:1 htb rate 90000000bit "
                     "ceil 90000000bit burst 131072 cburst 131072 quantum 65536"));
  EXPECT_TRUE(Has(t, "tc -n tb-l0 class replace dev s0 parent 1:1 classid 1:100 htb rate 30000000bit "
                     "ceil 90000000bit burst 131072 cburst 131072 quantum 65536"));
  for (const auto& c : t) {
    EXPECT_EQ(c.find("root"), std::string::npos) << c;
    EXPECT_EQ(c.find("filter"), std::string::npos) << c;
    EXPECT_EQ(c.find("tb-s0"), std::string::npos) << c;  // one direction only
  }
  shell.commands.clear();
  ASSERT_TRUE(inj.Undo(rate).ok());
  EXPECT_TRUE(Has(Texts(shell), "tc -n tb-l0 class replace dev s0 parent 1: classid 1:1 htb rate "
                                "400000000bit ceil 400000000bit burst 131072 cburst 131072 quantum 65536"));
}

TEST(Injector, ClearAllRestoresEveryLinkAndRemovesEveryRule) {
  RecordingShell shell;
  Injector inj(Star(2), shell, "/bin/genie");
  ASSERT_TRUE(inj.ClearAll().ok());
  auto t = Texts(shell);
  for (const char* ns : {"tb-h0", "tb-h1", "tb-sw"}) {
    EXPECT_TRUE(Has(t, std::string("ip netns exec ") + ns + " iptables -w -t mangle -F PREROUTING"));
  }
  EXPECT_TRUE(Has(t, "ip -n tb-sw link set h1n0 up"));
  EXPECT_TRUE(Has(t, "tc -n tb-sw qdisc replace dev h0n0 root tbf rate 400000000bit burst 131072 "
                     "limit 2000000"));
}

TEST(FaultRunner, FaultsThatNeverTookEffectAreReportedWithWhy) {
  FaultSchedule schedule;
  Fault played, late, unreached, pending_in_iteration;
  played.link = late.link = unreached.link = pending_in_iteration.link = "h1";
  played.kind = late.kind = unreached.kind = pending_in_iteration.kind = FaultKind::kDown;
  late.at = 100 * kNsPerSec;                       // after the run's end
  unreached.iteration = 9;                         // the run stops at 3
  pending_in_iteration.iteration = 2;
  pending_in_iteration.at = 50 * kNsPerSec;        // triggered, but due after the end
  schedule.faults = {played, late, unreached, pending_in_iteration};
  const TimeNs start = 1000 * kNsPerSec;
  std::vector<FaultProgress> progress(4);
  progress[0] = {true, true, start};
  progress[1] = {true, false, start + 100 * kNsPerSec};
  progress[2] = {false, false, 0};
  progress[3] = {true, false, start + kNsPerSec + 50 * kNsPerSec};
  auto events = UnplayedFaults(schedule, progress, start, start + 2 * kNsPerSec, 3);
  ASSERT_EQ(events.size(), 3u);
  for (const auto& e : events) EXPECT_EQ(e.action, "not applied");
  EXPECT_NE(events[0].reason.find("due 100.000 s after the run's start, but the run ended "
                                  "2.000 s after it"),
            std::string::npos)
      << events[0].reason;
  EXPECT_NE(events[1].reason.find("iteration 9 was never reached (the run ended in iteration 3)"),
            std::string::npos)
      << events[1].reason;
  EXPECT_NE(events[2].reason.find("into iteration 2"), std::string::npos) << events[2].reason;
  const auto j = FaultRunner::ToJson(events);
  EXPECT_EQ(j[1]["action"], "not applied");
  EXPECT_EQ(j[1]["iteration"], 9);
  EXPECT_TRUE(j[1].contains("reason"));
}

}  // namespace
}  // namespace genie::testbed
