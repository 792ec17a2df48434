// FaultyTransport over TCP, two ranks: each fault does what it says, on its cue, and only to
// the peer it names.
#include "genie/net/faulty_transport.h"

#include <functional>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "genie/loop/event_loop.h"

namespace genie::net {
namespace {

struct Rank : TransportEvents {
  int rank = 0;
  std::unique_ptr<loop::EventLoop> loop;
  std::unique_ptr<Transport> t;
  FaultyTransport* faulty = nullptr;
  std::vector<uint64_t> sends, recvs;
  std::vector<std::string> fatal;
  void OnSendDone(uint64_t c) override { sends.push_back(c); }
  void OnRecvDone(uint64_t c, Bytes, uint64_t) override { recvs.push_back(c); }
  void OnWriteDone(uint64_t) override {}
  void OnRemoteWrite(int, uint16_t, uint64_t, Bytes, Bytes, uint32_t) override {}
  void OnFatal(const Status& s) override { fatal.push_back(s.message()); }
  bool RunUntil(const std::function<bool()>& pred) {
    const TimeNs deadline = loop->Now() + 30 * kNsPerSec;
    while (!pred()) {
      if (loop->Now() > deadline) return false;
      loop->RunOnce(loop->Now() + 10 * kNsPerMs);
    }
    return true;
  }
  void Settle() {
    for (int i = 0; i < 20; ++i) loop->RunOnce(loop->Now() + kNsPerMs);
  }
};

// Rank 0 has `faults` (towards rank 1); rank 1 is plain TCP. Both connected.
struct Pair {
  Rank r[2];
  explicit Pair(std::vector<Fault> faults) {
    std::vector<std::string> addresses;
    for (int i = 0; i < 2; ++i) {
      r[i].rank = i;
      r[i].loop = std::move(loop::EventLoop::Create(loop::SleepPolicy{false, 0})).value();
      TransportOptions o;
      o.rank = i;
      o.world_size = 2;
      o.job_id = "faulty";
      o.peer_timeout = 30 * kNsPerSec;
      auto tcp = std::move(DefaultTransportFactory()(r[i].loop.get(), o)).value();
      if (i == 0) {
        auto f = std::make_unique<FaultyTransport>(r[i].loop.get(), std::move(tcp), 0, faults);
        r[i].faulty = f.get();
        r[i].t = std::move(f);
      } else {
        r[i].t = std::move(tcp);
      }
      r[i].t->SetEvents(&r[i]);
      addresses.push_back(std::move(r[i].t->Listen()).value());
    }
    Run([&](Rank& k) {
      ASSERT_TRUE(
          k.t->Connect(addresses, AllPeers(k.rank, static_cast<int>(addresses.size()))).ok());
    });
  }
  void Run(const std::function<void(Rank&)>& script) {
    std::thread t0([&] { script(r[0]); }), t1([&] { script(r[1]); });
    t0.join();
    t1.join();
  }
  // Orderly end of both: a barrier after which everything that was sent has arrived.
  void Shutdown() {
    Run([](Rank& k) { (void)k.t->Shutdown(10 * kNsPerSec); });
  }
};

TEST(FaultyTransportTest, KillAfterTwoMessagesReportsThePeerOnceAndSwallowsItsTraffic) {
  Pair p({{Fault::Kind::kKill, 1, 2}});
  std::vector<unsigned char> buf(8);
  p.Run([&](Rank& k) {
    if (k.rank == 0) {
      k.t->PostRecv({1, 0, 9, buf.data(), buf.size(), 50});  // rank 1 answers; swallowed
      for (uint64_t tag = 1; tag <= 3; ++tag) k.t->PostSend({1, 0, tag, nullptr, 8, tag});
      ASSERT_TRUE(k.RunUntil([&] { return !k.fatal.empty() && k.sends.size() == 2; }));
      ASSERT_TRUE(k.RunUntil([&] { return k.t->counters(1).messages_received == 1; }));
      k.Settle();
      ASSERT_EQ(k.fatal.size(), 1u);
      EXPECT_EQ(k.fatal[0], "rank 0 lost rank 1: injected fault (kill after 2 message(s))");
      EXPECT_EQ(k.sends, (std::vector<uint64_t>{1, 2}));  // the third never left
      EXPECT_TRUE(k.recvs.empty());
      EXPECT_EQ(k.faulty->faults_started(), 1);
    } else {
      for (uint64_t tag = 1; tag <= 2; ++tag) k.t->PostRecv({0, 0, tag, nullptr, 8, tag});
      ASSERT_TRUE(k.RunUntil([&] { return k.recvs.size() == 2; }));
      k.t->PostSend({0, 0, 9, buf.data(), buf.size(), 9});
      ASSERT_TRUE(k.RunUntil([&] { return k.sends.size() == 1; }));
    }
  });
  p.Shutdown();
  EXPECT_EQ(p.r[1].t->counters(0).messages_received, 2u);
}

TEST(FaultyTransportTest, DropCompletesSendsThatNeverArrive) {
  Pair p({{Fault::Kind::kDrop, 1, 1}});
  p.Run([&](Rank& k) {
    if (k.rank == 0) {
      for (uint64_t tag = 1; tag <= 3; ++tag) k.t->PostSend({1, 0, tag, nullptr, 100, tag});
      ASSERT_TRUE(k.RunUntil([&] { return k.sends.size() == 3; }));
      EXPECT_TRUE(k.fatal.empty());
    } else {
      k.t->PostRecv({0, 0, 1, nullptr, 100, 1});
      ASSERT_TRUE(k.RunUntil([&] { return k.recvs.size() == 1; }));
    }
  });
  p.Shutdown();  // a barrier: anything sent has arrived by now
  EXPECT_EQ(p.r[0].t->counters(1).messages_sent, 1u);
  EXPECT_EQ(p.r[1].t->counters(0).messages_received, 1u);
  EXPECT_EQ(p.r[1].t->unexpected_messages(), 0u);
}

TEST(FaultyTransportTest, DelayKeepsOrderAndDeliversEverything) {
  Pair p({{Fault::Kind::kDelay, 1, 1, -1, 30 * kNsPerMs}});
  std::vector<std::vector<unsigned char>> out, in(4, std::vector<unsigned char>(64));
  for (unsigned char i = 0; i < 4; ++i) out.emplace_back(64, i);
  p.Run([&](Rank& k) {
    if (k.rank == 0) {
      for (uint64_t i = 0; i < 4; ++i) k.t->PostSend({1, 0, 5, out[i].data(), 64, i});
      // The delayed ones are not in the inner transport yet when the first is done.
      ASSERT_TRUE(k.RunUntil([&] { return k.sends.size() == 4; }));
    } else {
      for (uint64_t i = 0; i < 4; ++i) k.t->PostRecv({0, 0, 5, in[i].data(), 64, i});
      ASSERT_TRUE(k.RunUntil([&] { return k.recvs.size() == 4; }));
    }
  });
  EXPECT_EQ(in, out);  // same tag: order is all that tells them apart
  EXPECT_EQ(p.r[0].faulty->faults_started(), 1);
  EXPECT_TRUE(p.r[0].fatal.empty());
  p.Shutdown();
}

TEST(FaultyTransportTest, StallNeitherSendsNorCompletesAndReportsNothing) {
  Pair p({{Fault::Kind::kStall, 1, 0}});
  p.Run([&](Rank& k) {
    if (k.rank == 0) {
      k.t->PostRecv({1, 0, 2, nullptr, 10, 2});
      k.t->PostSend({1, 0, 1, nullptr, 10, 1});
      // Rank 1's message reaches the inner transport but not the caller.
      ASSERT_TRUE(k.RunUntil([&] { return k.t->counters(1).messages_received == 1; }));
      k.Settle();
      EXPECT_TRUE(k.sends.empty());
      EXPECT_TRUE(k.recvs.empty());
      EXPECT_TRUE(k.fatal.empty());
    } else {
      k.t->PostSend({0, 0, 2, nullptr, 10, 2});
      ASSERT_TRUE(k.RunUntil([&] { return k.sends.size() == 1; }));
    }
  });
  p.Shutdown();
  EXPECT_EQ(p.r[1].t->counters(0).messages_received, 0u);
}

TEST(FaultyTransportTest, AFaultCanStartAtATimeAfterConnect) {
  Pair p({{Fault::Kind::kKill, 1, 1'000'000, 20 * kNsPerMs}});
  p.Run([&](Rank& k) {
    if (k.rank == 0) {
      ASSERT_TRUE(k.RunUntil([&] { return !k.fatal.empty(); }));
      EXPECT_NE(k.fatal[0].find("rank 0 lost rank 1: injected fault"), std::string::npos);
      EXPECT_NE(k.fatal[0].find("at 20.000 ms"), std::string::npos) << k.fatal[0];
    }
  });
}

TEST(FaultyTransportTest, FaultsConcernOnlyTheirPeer) {
  Pair p({{Fault::Kind::kDrop, 7, 0}});  // another peer's fault: nothing happens to rank 1
  p.Run([&](Rank& k) {
    const int peer = 1 - k.rank;
    k.t->PostRecv({peer, 0, 1, nullptr, 4, 1});
    k.t->PostSend({peer, 0, 1, nullptr, 4, 1});
    ASSERT_TRUE(k.RunUntil([&] { return k.recvs.size() == 1 && k.sends.size() == 1; }));
    EXPECT_TRUE(k.fatal.empty());
  });
  EXPECT_EQ(p.r[0].t->name(), "faulty(tcp)");
  p.Shutdown();
}

}  // namespace
}  // namespace genie::net
