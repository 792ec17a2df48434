// PeerLiveness on a ManualEnv: every rule of peer silence and heartbeats, by arithmetic.
#include "genie/net/liveness.h"

#include "genie/env/manual_env.h"

#include <map>
#include <vector>

#include <gtest/gtest.h>

namespace genie::net {
namespace {

constexpr TimeNs kTimeout = 400 * kNsPerMs;  // interval 100 ms

// Rank 0 of `n`; records what the ticks asked for.
struct Harness {
  env::ManualEnv clock{1'000 * kNsPerSec};
  PeerLiveness live;
  std::map<int, PeerLiveness::Link> links;  // missing: open, not excused, can heartbeat
  std::vector<int> heartbeats;
  std::vector<std::pair<int, TimeNs>> silent;

  explicit Harness(int n) : live(0, n, kTimeout, &clock) {
    live.StartTicking();
    live.StartChecking();
  }
  void Tick() {
    PeerLiveness::TickActions a;
    a.link = [&](int p) {
      auto it = links.find(p);
      return it != links.end() ? it->second : PeerLiveness::Link{true, false, true};
    };
    a.send_heartbeat = [&](int p) { heartbeats.push_back(p); };
    a.silent = [&](int p, TimeNs s) { silent.emplace_back(p, s); };
    live.Tick(a);
  }
  // One interval passes and the tick runs, as when the loop is driven all along.
  void Step() {
    clock.Advance(live.interval());
    Tick();
  }
};

TEST(PeerLivenessTest, IntervalIsAQuarterOfTheTimeoutWithinBounds) {
  EXPECT_EQ(PeerLiveness::IntervalFor(400 * kNsPerMs), 100 * kNsPerMs);
  EXPECT_EQ(PeerLiveness::IntervalFor(20 * kNsPerMs), 10 * kNsPerMs);
  EXPECT_EQ(PeerLiveness::IntervalFor(60 * kNsPerSec), kNsPerSec);
  // Many peers: the bound grows by 1 s per 16 peers, never past a quarter of the timeout.
  EXPECT_EQ(PeerLiveness::IntervalFor(60 * kNsPerSec, 16), kNsPerSec);
  EXPECT_EQ(PeerLiveness::IntervalFor(60 * kNsPerSec, 255), 15 * kNsPerSec);
  EXPECT_EQ(PeerLiveness::IntervalFor(30 * kNsPerSec, 255), 7500 * kNsPerMs);
  EXPECT_EQ(PeerLiveness::IntervalFor(400 * kNsPerMs, 255), 100 * kNsPerMs);
}

TEST(PeerLivenessTest, ASilentPeerIsReportedOnceExactlyAtPeerTimeout) {
  Harness h(3);
  for (int i = 0; i < 3; ++i) {
    h.live.Heard(2);  // rank 2 speaks, rank 1 does not
    h.Step();
    EXPECT_TRUE(h.silent.empty()) << "tick " << i;
  }
  h.live.Heard(2);
  h.Step();  // 400 ms of silence
  ASSERT_EQ(h.silent.size(), 1u);
  EXPECT_EQ(h.silent[0], std::make_pair(1, kTimeout));
  for (int i = 0; i < 10; ++i) {
    h.live.Heard(2);
    h.Step();
  }
  EXPECT_EQ(h.silent.size(), 1u);  // once only, and never rank 2
}

TEST(PeerLivenessTest, EveryPeerThatSpeaksStaysAlive) {
  Harness h(4);
  for (int i = 0; i < 50; ++i) {
    for (int p = 1; p < 4; ++p) h.live.Heard(p);
    h.Step();
  }
  EXPECT_TRUE(h.silent.empty());
}

TEST(PeerLivenessTest, HeartbeatsGoOnlyToPeersNothingWentToAndThatCanTakeOne) {
  Harness h(4);
  h.live.Sent(1);                                 // traffic went to rank 1: no heartbeat needed
  h.links[3] = PeerLiveness::Link{true, false, false};  // rank 3's channel 0 is backed up
  h.Step();
  EXPECT_EQ(h.heartbeats, std::vector<int>{2});
  h.heartbeats.clear();
  h.Step();  // nothing went to rank 1 since the last tick
  EXPECT_EQ(h.heartbeats, (std::vector<int>{1, 2}));
}

TEST(PeerLivenessTest, OwnStallIsNotBlamedOnPeers) {
  Harness h(2);
  h.live.Heard(1);
  h.Step();
  // This rank's loop was not driven for ten timeouts (the machine was paused or starved): the
  // peer's frames waited unread. Only one interval counts.
  h.clock.Advance(10 * kTimeout);
  h.Tick();
  EXPECT_TRUE(h.silent.empty());
  // Silence counts again from there: three more quiet intervals make the timeout.
  h.Step();
  h.Step();
  EXPECT_TRUE(h.silent.empty());
  h.Step();
  ASSERT_EQ(h.silent.size(), 1u);
  EXPECT_EQ(h.silent[0].second, kTimeout);
}

TEST(PeerLivenessTest, SilencesShorterThanTheTimeoutAreForgiven) {
  Harness h(2);
  for (int round = 0; round < 5; ++round) {
    h.Step();
    h.Step();
    h.Step();  // 300 ms quiet
    h.live.Heard(1);
    h.Step();
  }
  EXPECT_TRUE(h.silent.empty());
}

TEST(PeerLivenessTest, ExcusedClosedAndDonePeersAreNotChecked) {
  Harness h(4);
  h.links[1] = PeerLiveness::Link{true, true, true};   // paused by us, or said goodbye
  h.links[2] = PeerLiveness::Link{false, false, false};  // closed in order
  h.live.Done(3);                                       // already reported lost
  for (int i = 0; i < 20; ++i) h.Step();
  EXPECT_TRUE(h.silent.empty());
  // Rank 1's excuse ends: silence counts from then.
  h.links.erase(1);
  for (int i = 0; i < 3; ++i) h.Step();
  EXPECT_TRUE(h.silent.empty());
  h.Step();
  ASSERT_EQ(h.silent.size(), 1u);
  EXPECT_EQ(h.silent[0].first, 1);
}

TEST(PeerLivenessTest, BeforeCheckingStartsHeartbeatsGoOutButNobodyIsBlamed) {
  env::ManualEnv clock;
  PeerLiveness live(1, 2, kTimeout, &clock);
  live.StartTicking();
  std::vector<int> heartbeats;
  int silent = 0;
  PeerLiveness::TickActions a;
  a.link = [](int) { return PeerLiveness::Link{true, false, true}; };
  a.send_heartbeat = [&](int p) { heartbeats.push_back(p); };
  a.silent = [&](int, TimeNs) { ++silent; };
  for (int i = 0; i < 20; ++i) {  // still connecting to slower ranks
    clock.Advance(live.interval());
    live.Tick(a);
  }
  EXPECT_EQ(heartbeats.size(), 20u);
  EXPECT_EQ(silent, 0);
  live.StartChecking();
  for (int i = 0; i < 4; ++i) {
    clock.Advance(live.interval());
    live.Tick(a);
  }
  EXPECT_EQ(silent, 1);
  live.StopChecking();
}

}  // namespace
}  // namespace genie::net
