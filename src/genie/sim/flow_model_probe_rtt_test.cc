// The flow model's bbr PROBE_RTT (flow_model.h, set_probe_rtt): when each connection probes,
// what it moves meanwhile, and who gets the rest. Links at 1 B/ns; probes every 1,000 ns for
// 200 ns at 0.25 B/ns, so that figures are round.
#include <gtest/gtest.h>

#include <vector>

#include "genie/config/network_config.h"
#include "genie/sim/flow_model.h"
#include "genie/sim/flow_model_harness.h"

namespace genie::sim {
namespace {

using testing::Harness;
using testing::kOneBytePerNs;

config::NetworkConfig Star(int n) {
  config::NetworkConfig c{"", {config::TopologyKind::kSwitch}, {n}, {kOneBytePerNs}, {0}};
  c.goodput = {1.0};
  c.message_overhead_ns = {0.0};
  return c;
}

void Probes(Harness& h) { h.model().set_probe_rtt(1000, 200, kOneBytePerNs / 4); }

// Opened at 0: due at 1,000 while the message is on the wire, 200 ns at a quarter of the rate
// (50 B), then the link's rate again: 1,000 + 200 + 950 ns.
TEST(FlowModelProbeRtt, AConnectionProbesOnItsIntervalWhileSending) {
  Harness h(Star(4));
  Probes(h);
  h.Send(0, 1, 2000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2150}));
  Harness without(Star(4));
  without.Send(0, 1, 2000);
  EXPECT_EQ(without.Run(), (std::vector<TimeNs>{2000}));
}

// Idle when it was due: bbr probes when the connection next sends (1,500 to 1,700), and the
// next one is due 1,000 ns after that one ended.
TEST(FlowModelProbeRtt, AnIdleConnectionProbesWhenItNextSends) {
  Harness h(Star(4));
  Probes(h);
  h.Send(0, 1, 100);          // 0-100: before the due time
  h.Send(0, 1, 1000, 1500);   // 50 B by 1,700, then 950 ns
  h.Send(0, 1, 1000, 2700);   // due at 2,700 again: 50 B in 200 ns, then 950 ns
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{100, 2650, 3850}));
}

// A simulation that starts long after its connections opened (one iteration of a run) finds
// them on bbr's grid, every 1,200 ns from 1,000 after they opened.
TEST(FlowModelProbeRtt, ConnectionsOpenedBeforeTheRunProbeOnTheirGrid) {
  {
    Harness h(Star(4));
    Probes(h);
    h.model().set_opened_at(0, -2500);  // probes at -1,500 and -300; the next at 900
    h.Send(0, 1, 1000);
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1150}));
  }
  {
    Harness h(Star(4));
    Probes(h);
    h.model().set_opened_at(1, -3000);  // the receiver's age does not count
    h.model().set_opened_at(0, -1100);  // the sender's: in a probe until 100
    h.Send(0, 1, 1000);
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1075}));
  }
}

// Two connections into one host, opened 500 ns apart: each probes alone (the first at 1,000,
// 2,200, 3,400; the second at 1,500, 2,700, 3,900), and the other takes what it leaves, so the
// link stays full: the last byte of the 4,000 crosses it at 4,000. The second's last probe
// comes as it ends at 3,900 (the first's three probes cost it more).
TEST(FlowModelProbeRtt, TheOtherConnectionTakesWhatAProbeLeaves) {
  Harness h(Star(4));
  Probes(h);
  h.model().set_opened_at(1, 500);  // the second one's sender
  h.Send(0, 2, 2000);
  h.Send(1, 2, 2000);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{4000, 3900}));
}

}  // namespace
}  // namespace genie::sim
