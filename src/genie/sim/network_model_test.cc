// Exact delivery times of both analytical models, against the figures ASTRA-sim produces
// (REFERENCE §2): 32,768-byte messages are one step of an 8-rank, 1 MiB, 4-chunk ring
// all-reduce.
#include "genie/sim/network_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

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
  size_t Send(int src, int dst, Bytes bytes, TimeNs at = 0, uint64_t flow = 0) {
    size_t i = delivered_.size();
    delivered_.push_back(-1);
    queue_.At(at, [this, src, dst, bytes, flow, i] {
      model_->Transmit(src, dst, bytes, flow, 0, [this, i] { delivered_[i] = queue_.Now(); });
    });
    return i;
  }
  const std::vector<TimeNs>& Run() {
    queue_.Run();
    return delivered_;
  }
  NetworkModel& model() { return *model_; }
  const Topology& topology() const { return topology_; }
  const EventQueue& queue() const { return queue_; }

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

// 1 MiB cut into 16-byte slices sent at once (genie's --slice 16): ASTRA-sim's per-message
// truncation alone would serialize each slice in floor(0.298) = 0 ns, and the unaware model
// would overlap them all. Neither may beat the link: 1 MiB at 53.687 B/ns takes 19,531.25 ns.
TEST(NetworkModelTest, TinySlicesNeverBeatTheLinkBandwidth) {
  constexpr Bytes kSlice = 16;
  constexpr int kSlices = (1 << 20) / kSlice;
  const TimeNs kBound = 19532;  // ceil(2^20 / (50 * 2^30 / 1e9))
  for (auto kind : {NetworkModelKind::kCongestionUnaware, NetworkModelKind::kCongestionAware}) {
    Harness h(Ring8(), kind);
    for (int i = 0; i < kSlices; ++i) h.Send(0, 1, kSlice, 0, /*flow=*/7);
    const auto& t = h.Run();
    TimeNs last = 0;
    for (TimeNs x : t) last = std::max(last, x);
    EXPECT_GE(last, kBound - 1 + 500) << NetworkModelName(kind);  // + latency
    EXPECT_LE(last, kBound + 500 + 1) << NetworkModelName(kind);  // and not slower
    // Each slice arrives no earlier than the bytes ahead of it allow.
    for (int i = 0; i < kSlices; i += 997) {
      const double ahead = static_cast<double>(kSlice) * (i + 1) / h.topology().bytes_per_ns(0);
      EXPECT_GE(static_cast<double>(t[static_cast<size_t>(i)]), std::floor(ahead + 500) - 1)
          << NetworkModelName(kind) << " slice " << i;
    }
  }
}

// Told that messages are whole (as ASTRA-sim's are), the aware model starts a queued message
// at the whole ns the link frees, as ASTRA-sim's Link (integer event times): two 256 KiB
// messages on a 50 GB/s, 500 ns Switch, serialization 4,882.8125 ns. The first leaves the
// uplink at 4,882, reaches the switch at 5,382 and its npu at 10,764; the second starts at
// 4,882 and arrives 4,882 + 2 x 5,382 = 15,646. When messages may be pieces (the default), the
// second starts at 4,882.8125: switch at 4,882 + floor(0.8125 + 5,382.8125) = 10,265, npu
// 15,647 (an incast: its port frees at 10,264.8125, so 10,264 + 5,383).
TEST(NetworkModelTest, AwareQueuedWholeMessageStartsAtTheWholeNs) {
  const config::NetworkConfig sw{"", {TopologyKind::kSwitch}, {8}, {50.0}, {500.0}};
  constexpr Bytes kChunk = 256 << 10;
  for (bool cut : {false, true}) {
    const TimeNs second = cut ? 15647 : 15646;
    // One sender, two receivers (a tree node's children): they queue on its uplink.
    Harness fanout(sw, NetworkModelKind::kCongestionAware);
    fanout.model().set_cut_messages(cut);
    fanout.Send(0, 1, kChunk, 0, 7);
    fanout.Send(0, 2, kChunk, 0, 7);
    EXPECT_EQ(fanout.Run(), (std::vector<TimeNs>{10764, second})) << "cut " << cut;
    // Two senders, one receiver: they queue on its switch port.
    Harness incast(sw, NetworkModelKind::kCongestionAware);
    incast.model().set_cut_messages(cut);
    incast.Send(1, 0, kChunk, 0, 7);
    incast.Send(2, 0, kChunk, 0, 7);
    EXPECT_EQ(incast.Run(), (std::vector<TimeNs>{10764, second})) << "cut " << cut;
  }
}

// The unaware model stays ASTRA-sim's for messages of different flows (concurrent chunks,
// other collectives): they never delay one another; messages of one flow queue.
TEST(NetworkModelTest, UnawareFlowsQueueOnlyBehindThemselves) {
  Harness h(Hgx(), NetworkModelKind::kCongestionUnaware);
  h.Send(0, 1, kMsg, 0, /*flow=*/1);
  h.Send(0, 1, kMsg, 0, /*flow=*/2);
  h.Send(0, 1, kMsg, 0, /*flow=*/0);  // a flow of its own
  h.Send(0, 1, kMsg, 0, /*flow=*/1);  // starts behind the first, at 76.29 ns:
  h.Send(2, 1, kMsg, 0, /*flow=*/1);  // floor(2 x 76.29 + 2 x 936.25) = 2025; another pair:
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1948, 1948, 1948, 2025, 1948}));  // its own stream
  // Sent later, when the flow has long been idle: ASTRA-sim's delay again.
  Harness later(Hgx(), NetworkModelKind::kCongestionUnaware);
  later.Send(0, 1, kMsg, 0, 1);
  later.Send(0, 1, kMsg, 5000, 1);
  EXPECT_EQ(later.Run(), (std::vector<TimeNs>{1948, 5000 + 1948}));
}

// On a path of 0 ns a message arrives in the ns its wire frees, so there a flow is idle only
// once nothing is in flight (its arrivals are counted): a message sent after the arrival, in
// that ns, starts afresh; one sent before it queues behind the first's fraction of a ns. (On a
// path of at least 1 ns a free wire is all a later message can see: arrivals are not counted.)
TEST(NetworkModelTest, UnawareFlowOnAZeroLatencyPathIsIdleOnceDelivered) {
  // 3 B/ns exactly (bandwidth x 2^30 / 1e9): 17 B take 5.67 ns, so the first arrives at 5.
  const config::NetworkConfig net{"", {TopologyKind::kSwitch}, {8}, {5859375.0 / 2097152.0}, {0.0}};
  for (bool after_arrival : {true, false}) {
    EventQueue queue;
    Topology topology = *Topology::Create(net);
    auto model = MakeNetworkModel(NetworkModelKind::kCongestionUnaware, &topology, &queue);
    TimeNs first = -1, second = -1;
    auto send_second = [&] { model->Transmit(0, 1, 17, 1, 0, [&] { second = queue.Now(); }); };
    queue.At(0, [&] {
      model->Transmit(0, 1, 17, 1, 0, [&] {
        first = queue.Now();
        if (after_arrival) send_second();
      });
    });
    if (!after_arrival) queue.At(5, send_second);  // in the ns's bucket before the arrival
    queue.Run();
    EXPECT_EQ(first, 5);
    // Afresh: 5 + floor(5.67); behind the fraction: 5 + floor(0.67 + 5.67).
    EXPECT_EQ(second, after_arrival ? 10 : 11) << (after_arrival ? "after" : "before");
  }
}

// Over a path of at least 1 ns arrivals are not counted: a flow whose wire is free is reused for
// another key while its message is still in flight, and that message is still delivered on time.
TEST(NetworkModelTest, UnawareFlowReusedWhileItsMessageIsInFlight) {
  Harness h(Hgx(), NetworkModelKind::kCongestionUnaware);
  // Source 0's homes hold flows 1 and 2; flow 3 takes one once its wire is free (76 ns), while
  // its message is in flight until 1,948 ns; flow 1 then queues on a fresh wire.
  h.Send(0, 1, kMsg, 0, /*flow=*/1);
  h.Send(0, 1, kMsg, 0, /*flow=*/2);
  h.Send(0, 1, kMsg, 100, /*flow=*/3);
  h.Send(0, 1, kMsg, 200, /*flow=*/1);
  EXPECT_EQ(h.Run(), (std::vector<TimeNs>{1948, 1948, 100 + 1948, 200 + 1948}));
}

// Extreme but accepted inputs: the delay does not fit in int64 ns. The model fails the queue
// with an error naming the message and the network.yml keys, and nothing is delivered.
TEST(NetworkModelTest, DelayPastTheEndOfTimeIsAnErrorNamingTheMessage) {
  config::NetworkConfig slow{"slow.yml", {TopologyKind::kRing}, {8}, {1e-6}, {500.0}};
  for (auto kind : {NetworkModelKind::kCongestionUnaware, NetworkModelKind::kCongestionAware}) {
    for (uint64_t flow : {uint64_t{0}, uint64_t{3}}) {
      Harness h(slow, kind);
      h.Send(0, 1, Bytes{1} << 60, 0, flow);  // 2^60 B at 1e-6 GB/s: ~1e24 ns
      h.Send(2, 3, 1, 0, flow);
      const auto& t = h.Run();
      EXPECT_EQ(t[0], -1);
      ASSERT_TRUE(h.queue().failed()) << NetworkModelName(kind);
      const std::string& m = h.queue().status().message();
      EXPECT_NE(m.find("simulated time overflows"), std::string::npos) << m;
      EXPECT_NE(m.find(std::to_string(Bytes{1} << 60) + "-byte message from npu 0 to npu 1"),
                std::string::npos) << m;
      EXPECT_NE(m.find("slow.yml"), std::string::npos) << m;
      EXPECT_NE(m.find("\"bandwidth\""), std::string::npos) << m;
      EXPECT_NE(m.find("1e-06 GB/s"), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace genie::sim
