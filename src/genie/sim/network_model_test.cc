// Exact delivery times of both analytical models, against the figures ASTRA-sim produces
// (REFERENCE §2): 32,768-byte messages are one step of an 8-rank, 1 MiB, 4-chunk ring
// all-reduce.
#include "genie/sim/network_model.h"

#include <gtest/gtest.h>

#include "genie/config/network_config.h"

namespace genie::sim {
namespace {

using config::TopologyKind;

constexpr Bytes kMsg = 32768;

config::NetworkConfig Ring8() {  // Ring_8npus.yml
  return {"", {TopologyKind::kRing}, {8}, {50.0}, {500.0}};
}
config::NetworkConfig Hgx() {  // HGX-H100-validated.yml
  return {"", {TopologyKind::kSwitch}, {8}, {400.0}, {936.25}};
}

// Runs a scenario and records when each message was delivered.
class Harness {
 public:
  Harness(const config::NetworkConfig& net, NetworkModelKind kind)
      : topology_(*Topology::Create(net)), model_(MakeNetworkModel(kind, &topology_, &queue_)) {}
  // Sends at time `at`; returns the index of the message in delivered().
  size_t Send(int src, int dst, Bytes bytes, TimeNs at = 0) {
    size_t i = delivered_.size();
    delivered_.push_back(-1);
    queue_.At(at, [this, src, dst, bytes, i] {
      model_->Transmit(src, dst, bytes, [this, i] { delivered_[i] = queue_.Now(); });
    });
    return i;
  }
  const std::vector<TimeNs>& Run() {
    queue_.Run();
    return delivered_;
  }
  NetworkModel& model() { return *model_; }
  const Topology& topology() const { return topology_; }

 private:
  EventQueue queue_;
  Topology topology_;
  std::unique_ptr<NetworkModel> model_;
  std::vector<TimeNs> delivered_;
};

TEST(NetworkModelTest, ParsesModelNames) {
  EXPECT_EQ(ParseNetworkModelKind("aware"), NetworkModelKind::kCongestionAware);
  EXPECT_EQ(ParseNetworkModelKind("congestion_unaware"), NetworkModelKind::kCongestionUnaware);
  EXPECT_EQ(ParseNetworkModelKind("fast"), std::nullopt);
  EXPECT_STREQ(NetworkModelName(NetworkModelKind::kCongestionAware), "aware");
}

TEST(NetworkModelTest, RingOneHopIsTheSameInBothModels) {
  for (auto kind : {NetworkModelKind::kCongestionUnaware, NetworkModelKind::kCongestionAware}) {
    Harness h(Ring8(), kind);
    h.Send(0, 1, kMsg);
    h.Send(7, 0, kMsg);  // wrap-around link
    EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1110, 1110})) << NetworkModelName(kind);
  }
}

TEST(NetworkModelTest, RingMultiHop) {
  Harness unaware(Ring8(), NetworkModelKind::kCongestionUnaware);
  unaware.Send(0, 3, kMsg);
  unaware.Send(0, 5, kMsg);
  EXPECT_EQ(unaware.Run(), (std::vector<TimeNs>{2110, 2110}));  // floor(3*500 + 610.35)
  Harness aware(Ring8(), NetworkModelKind::kCongestionAware);
  aware.Send(0, 3, kMsg);
  aware.Send(0, 5, kMsg);  // anticlockwise: shares no link with 0->3
  EXPECT_EQ(aware.Run(), (std::vector<TimeNs>{3330, 3330}));  // 3 x floor(500 + 610.35)
}

TEST(NetworkModelTest, SwitchUnawareIsTwoHopsTruncatedOnce) {
  Harness h(Hgx(), NetworkModelKind::kCongestionUnaware);
  h.Send(0, 1, kMsg);
  h.Send(0, 1, kMsg);  // no contention in this model
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1948, 1948}));  // floor(2*936.25 + 76.29)
}

TEST(NetworkModelTest, SwitchAwareStoresAndForwardsEachHopTruncated) {
  Harness h(Hgx(), NetworkModelKind::kCongestionAware);
  h.Send(0, 1, kMsg);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2024}));  // 2 x floor(936.25 + 76.29)
}

// Two chunks leaving one rank together: the second waits for the first's serialization
// (floor(76.29) = 76 ns) on the rank->switch link and stays 76 ns behind — the +76 in
// ASTRA-sim's 57,426 ns = 2 x 28,675 + 76.
TEST(NetworkModelTest, SwitchAwareSecondMessageQueuesBehindFirst) {
  Harness h(Hgx(), NetworkModelKind::kCongestionAware);
  h.Send(0, 1, kMsg);
  h.Send(0, 1, kMsg);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2024, 2100}));
  auto links = h.model().link_stats();
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(h.topology().LinkName(links[0].link), "dim 0: npu 0 -> switch 8 (dim 0)");
  EXPECT_EQ(links[0].messages, 2u);
  EXPECT_EQ(links[0].bytes, 2 * kMsg);
  EXPECT_EQ(links[0].busy_ns, 152);
  EXPECT_EQ(links[0].queued_ns, 76);
  EXPECT_EQ(links[0].max_queue, 1u);
  EXPECT_EQ(links[1].queued_ns, 0);  // already 76 ns apart on the switch->npu link
}

// Incast: different uplinks, one shared downlink at the switch.
TEST(NetworkModelTest, SwitchAwareIncastQueuesOnTheDownlink) {
  Harness h(Hgx(), NetworkModelKind::kCongestionAware);
  h.Send(0, 2, kMsg);
  h.Send(1, 2, kMsg);
  h.Send(3, 4, kMsg);  // unrelated pair: unaffected
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{2024, 2100, 2024}));
}

TEST(NetworkModelTest, RingAwareQueuesBehindABusyLinkMidRoute) {
  Harness h(Ring8(), NetworkModelKind::kCongestionAware);
  h.Send(0, 1, kMsg);
  h.Send(0, 1, kMsg);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1110, 1720}));  // 610 later: serialization
  Harness mid(Ring8(), NetworkModelKind::kCongestionAware);
  mid.Send(0, 2, kMsg);           // reaches npu 1 at 1110, holds link 1->2 until 1720
  mid.Send(1, 2, kMsg, 1111);     // finds 1->2 busy, starts at 1720
  EXPECT_EQ(mid.Run(), (std::vector<TimeNs>{2220, 2830}));
}

TEST(NetworkModelTest, LargerMessagesAndZeroBytes) {
  Harness h(Ring8(), NetworkModelKind::kCongestionAware);
  h.Send(0, 1, 1 << 20);  // 1 MiB: floor(500 + 19531.25)
  h.Send(2, 3, 0);        // latency only
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{20031, 500}));
  Harness u(Hgx(), NetworkModelKind::kCongestionUnaware);
  u.Send(0, 1, 0);
  u.Send(4, 4, kMsg);  // to itself: nothing crosses the network
  EXPECT_EQ(u.Run(), (std::vector<TimeNs>{1872, 0}));
}

// Beyond ASTRA-sim's 1-D congestion-aware backend: route dim 0 (switch), then dim 1 (ring).
TEST(NetworkModelTest, AwareRoutesDimensionByDimension) {
  config::NetworkConfig net{"", {TopologyKind::kSwitch, TopologyKind::kRing}, {4, 4},
                            {400.0, 50.0}, {936.25, 500.0}};
  Harness aware(net, NetworkModelKind::kCongestionAware);
  aware.Send(0, 5, kMsg);   // (0,0) -> (1,1): 2 switch hops + 1 ring hop
  // (0,0) -> (1,2): waits 76 ns on the shared uplink, reaches npu 1 at 2100, then waits for
  // the ring link (1,0)->(1,1) that the first message holds until 2024 + 610 = 2634.
  aware.Send(0, 9, kMsg);
  EXPECT_EQ(aware.Run(), (std::vector<TimeNs>{1012 + 1012 + 1110, 2634 + 2 * 1110}));
  Harness unaware(net, NetworkModelKind::kCongestionUnaware);
  unaware.Send(0, 5, kMsg);  // ASTRA-sim charges only the first differing dimension
  unaware.Send(0, 4, kMsg);  // (0,0) -> (0,1): dim 1 ring, one hop
  EXPECT_EQ(unaware.Run(), (std::vector<TimeNs>{1948, 1110}));
}

}  // namespace
}  // namespace genie::sim
