// FabricTransport beyond the conformance suite (net/transport_conformance_test.cc runs the
// shared contract over it, both modes): buffers offered ahead of their message and messages
// that come first pairing up in order on one key (and, once messages came first, going into the
// receiver's credits at once), one-sided writes and their notice, abort reasons
// reaching peers, another job's ranks refused, an address that is not a fabric one, filler
// payloads in the scratch tile beside real ones in their buffers, with the CQ polled. On
// loopback with tcp;ofi_rxm; ranks are threads, each with its own EventLoop.
#include "genie/net/fabric/fabric_transport.h"

#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "genie/loop/event_loop.h"

namespace genie::net {
namespace {

struct Node : TransportEvents {
  int rank = 0;
  std::unique_ptr<loop::EventLoop> loop;
  std::unique_ptr<FabricTransport> t;
  std::vector<uint64_t> writes_done;
  struct Landed {
    int peer;
    uint64_t key;
    Bytes offset, bytes;
    uint32_t imm;
  };
  std::vector<Landed> landed;
  std::vector<std::string> fatal;
  int sends_done = 0;
  struct Received {
    uint64_t cookie;
    Bytes bytes;
    uint64_t remote_data;
  };
  std::vector<Received> received;
  void OnSendDone(uint64_t) override { ++sends_done; }
  void OnRecvDone(uint64_t c, Bytes b, uint64_t rd) override { received.push_back({c, b, rd}); }
  void OnWriteDone(uint64_t c) override { writes_done.push_back(c); }
  void OnRemoteWrite(int peer, uint16_t, uint64_t key, Bytes offset, Bytes bytes,
                     uint32_t imm) override {
    landed.push_back({peer, key, offset, bytes, imm});
  }
  void OnFatal(const Status& s) override { fatal.push_back(s.message()); }
  bool RunUntil(const std::function<bool()>& pred, TimeNs limit = 20 * kNsPerSec) {
    const TimeNs deadline = loop->Now() + limit;
    while (!pred()) {
      if (loop->Now() > deadline) return false;
      loop->RunOnce(loop->Now() + 10 * kNsPerMs);
    }
    return true;
  }
};

// Two ranks (job ids may differ), listening; `connect` decides whether Connect is run.
std::vector<Node> MakeNodes(const std::vector<std::string>& jobs, bool rma,
                            std::vector<std::string>* addresses, TimeNs peer_timeout,
                            bool spin = false) {
  std::vector<Node> nodes(jobs.size());
  for (size_t r = 0; r < jobs.size(); ++r) {
    Node& n = nodes[r];
    n.rank = static_cast<int>(r);
    n.loop = std::move(loop::EventLoop::Create(loop::SleepPolicy{spin, 0})).value();
    TransportOptions o;
    o.rank = n.rank;
    o.world_size = static_cast<int>(jobs.size());
    o.job_id = jobs[r];
    o.peer_timeout = peer_timeout;
    o.fabric_rma = rma;
    auto t = FabricTransport::Create(n.loop.get(), o);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    if (!t.ok()) return {};
    n.t = std::move(*t);
    n.t->SetEvents(&n);
    auto a = n.t->Listen();
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    addresses->push_back(a.ok() ? *a : "");
  }
  return nodes;
}

void RunAll(std::vector<Node>& nodes, const std::function<void(Node&)>& script) {
  std::vector<std::thread> threads;
  for (Node& n : nodes) threads.emplace_back([&] { script(n); });
  for (auto& th : threads) th.join();
}

// Receives posted before their messages (their buffers offered ahead), messages sent before
// their receives (answered when the receive comes), and both at once, all on one (channel,
// tag): every message lands in the receive of its rank in the FIFO order, with its own
// remote_data, in both modes.
void OffersAndMessagesPairInOrder(bool rma) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"o", "o"}, rma, &addresses, 30 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 2u);
  constexpr int kPhase = 6;  // messages per phase; four phases
  constexpr Bytes kBytes = 70000;
  std::vector<std::vector<unsigned char>> out(4 * kPhase), in(4 * kPhase);
  for (int i = 0; i < 4 * kPhase; ++i) {
    out[i].assign(kBytes, 0);
    for (Bytes j = 0; j < kBytes; ++j) out[i][j] = static_cast<unsigned char>(i * 31 + j * 7);
    in[i].assign(kBytes, 0xEE);
  }
  std::barrier sync(2);
  RunAll(nodes, [&](Node& n) {
    ASSERT_TRUE(n.t->Connect(addresses, AllPeers(n.rank, 2)).ok());
    auto send = [&](int i) {
      n.t->PostSend({1 - n.rank, 3, 77, out[i].data(), kBytes, static_cast<uint64_t>(i),
                     1000 + static_cast<uint64_t>(i)});
    };
    auto recv = [&](int i) {
      n.t->PostRecv({1 - n.rank, 3, 77, in[i].data(), kBytes, static_cast<uint64_t>(i)});
    };
    const bool sender = n.rank == 1;
    // Phase 1: receives first (offered ahead).
    if (!sender) {
      for (int i = 0; i < kPhase; ++i) recv(i);
      n.RunUntil([] { return false; }, 200 * kNsPerMs);  // the offers reach the sender
    }
    sync.arrive_and_wait();
    if (sender) {
      n.RunUntil([] { return false; }, 200 * kNsPerMs);
      for (int i = 0; i < kPhase; ++i) send(i);
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == kPhase; }));
    } else {
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == kPhase; }));
    }
    sync.arrive_and_wait();
    // Phase 2: messages first (answered when each receive comes).
    if (sender) {
      for (int i = kPhase; i < 2 * kPhase; ++i) send(i);
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == 2 * kPhase; }));
    } else {
      n.RunUntil([] { return false; }, 200 * kNsPerMs);
    }
    sync.arrive_and_wait();
    if (!sender) {
      for (int i = kPhase; i < 2 * kPhase; ++i) recv(i);
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == 2 * kPhase; }));
    }
    sync.arrive_and_wait();
    n.RunUntil([] { return false; }, 200 * kNsPerMs);  // credits offered reach the sender
    sync.arrive_and_wait();
    // Phase 3: messages first again. The receiver saw messages come first, so it keeps
    // credits on offer: the payloads go at once into them (no clear-to-send), the sends
    // complete before any receive is posted, and the receives copy them out. (Right after
    // phase 2: an interleaved phase between may, on a busy machine, find every receive posted
    // first and rightly close the window.)
    const uint64_t cts_before = n.t->drive_stats().cts_replies;
    const uint64_t credit_before = n.t->drive_stats().sent_on_credit;
    if (sender) {
      for (int i = 2 * kPhase; i < 3 * kPhase; ++i) send(i);
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == 3 * kPhase; }));
      EXPECT_GE(n.t->drive_stats().sent_on_credit - credit_before, 1u);
    } else {
      n.RunUntil([] { return false; }, 200 * kNsPerMs);
    }
    sync.arrive_and_wait();
    if (!sender) {
      for (int i = 2 * kPhase; i < 3 * kPhase; ++i) recv(i);
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == 3 * kPhase; }));
      EXPECT_LT(n.t->drive_stats().cts_replies - cts_before, static_cast<uint64_t>(kPhase));
    }
    sync.arrive_and_wait();
    // Phase 4: both at once, interleaved, so that offers, credits and headers cross.
    for (int i = 3 * kPhase; i < 4 * kPhase; ++i) {
      sender ? send(i) : recv(i);
      n.RunUntil([] { return false; }, (i % 3) * kNsPerMs);
    }
    if (sender) {
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == 4 * kPhase; }));
    } else {
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == 4 * kPhase; }));
      std::vector<bool> seen(4 * kPhase, false);
      for (const Node::Received& r : n.received) {
        ASSERT_LT(r.cookie, seen.size());
        seen[r.cookie] = true;
        EXPECT_EQ(r.bytes, kBytes);
        EXPECT_EQ(r.remote_data, 1000 + r.cookie) << "receive " << r.cookie;
        EXPECT_TRUE(in[r.cookie] == out[r.cookie]) << "receive " << r.cookie << " got other data";
      }
      for (bool b : seen) EXPECT_TRUE(b);
      const auto& st = n.t->drive_stats();
      EXPECT_GE(st.offers, static_cast<uint64_t>(kPhase));       // phase 1 at least
      EXPECT_GE(st.cts_replies, static_cast<uint64_t>(kPhase));  // phase 2 at least
    }
    if (sender) {
      EXPECT_GE(n.t->drive_stats().sent_on_offer, static_cast<uint64_t>(kPhase));
    }
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
    sync.arrive_and_wait();
    EXPECT_TRUE(n.t->Shutdown(10 * kNsPerSec).ok());
  });
}

TEST(FabricTransport, OffersAndMessagesPairInOrderTagged) { OffersAndMessagesPairInOrder(false); }
TEST(FabricTransport, OffersAndMessagesPairInOrderRma) { OffersAndMessagesPairInOrder(true); }

// Filler payloads (no data, receives into nullptr: runs without --verify) larger than the
// scratch tile land in scratch, whether the receive or the message comes first, and a real
// payload after them still lands intact in its own buffer; with a loop that may spin the CQ is
// polled instead of blocking (spins counted), and everything completes all the same.
void FillerInScratchRealInBuffer(bool rma) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"f", "f"}, rma, &addresses, 30 * kNsPerSec, /*spin=*/true);
  ASSERT_EQ(nodes.size(), 2u);
  constexpr Bytes kBig = Bytes{3} << 20;  // > the 512 KiB tile, not a multiple of it
  constexpr Bytes kOdd = kBig + 12345;
  std::vector<unsigned char> out(kOdd), in(kOdd, 0xEE);
  for (Bytes j = 0; j < kOdd; ++j) out[j] = static_cast<unsigned char>(j * 13 + j / 4096);
  std::barrier sync(2);
  RunAll(nodes, [&](Node& n) {
    ASSERT_TRUE(n.t->Connect(addresses, AllPeers(n.rank, 2)).ok());
    const bool sender = n.rank == 1;
    if (sender) {
      n.t->PostSend({0, 0, 1, nullptr, kBig, 1, 0});  // its receive is posted first
      n.t->PostSend({0, 0, 2, nullptr, kOdd, 2, 0});  // sent before its receive
      n.t->PostSend({0, 0, 3, out.data(), kOdd, 3, 0});
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == 3; }));
    } else {
      n.t->PostRecv({1, 0, 1, nullptr, kBig, 1});
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == 1; }));
      n.RunUntil([] { return false; }, 100 * kNsPerMs);  // message 2 arrives first
      n.t->PostRecv({1, 0, 2, nullptr, kOdd, 2});
      n.t->PostRecv({1, 0, 3, in.data(), kOdd, 3});
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == 3; }));
      EXPECT_TRUE(in == out) << "the real payload after filler ones came out different";
      EXPECT_GT(n.t->drive_stats().spins, 0u) << "a loop that may spin polled nothing";
    }
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
    sync.arrive_and_wait();
    EXPECT_TRUE(n.t->Shutdown(10 * kNsPerSec).ok());
  });
}

TEST(FabricTransport, FillerLandsInScratchRealInItsBufferTagged) {
  FillerInScratchRealInBuffer(false);
}
TEST(FabricTransport, FillerLandsInScratchRealInItsBufferRma) { FillerInScratchRealInBuffer(true); }

// Payloads of many segments (fabric_internal.h: 2 MiB each, up to 8 in flight per message),
// several at once, some sent before their receive is posted and one not a multiple of the
// segment: each lands intact, and the bytes counted on the wire are exactly the payloads'.
void SegmentedPayloads(bool rma) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"s", "s"}, rma, &addresses, 30 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 2u);
  constexpr int kMessages = 4;
  constexpr Bytes kBytes = (Bytes{17} << 20) + 4097;  // 9 segments, the last of 4097 bytes
  std::vector<std::vector<unsigned char>> out(kMessages), in(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    out[i].resize(kBytes);
    for (Bytes j = 0; j < kBytes; ++j) out[i][j] = static_cast<unsigned char>(i * 29 + j * 11 + j / 8191);
    in[i].assign(kBytes, 0xEE);
  }
  std::barrier sync(2);
  RunAll(nodes, [&](Node& n) {
    ASSERT_TRUE(n.t->Connect(addresses, AllPeers(n.rank, 2)).ok());
    if (n.rank == 1) {
      for (int i = 0; i < kMessages; ++i) {
        n.t->PostSend({0, 0, 5, out[i].data(), kBytes, static_cast<uint64_t>(i), 0});
      }
      ASSERT_TRUE(n.RunUntil([&] { return n.sends_done == kMessages; }));
      EXPECT_EQ(n.t->counters(0).wire_bytes_sent, kMessages * kBytes);
    } else {
      // Half posted ahead, half after their messages came.
      for (int i = 0; i < kMessages / 2; ++i) {
        n.t->PostRecv({1, 0, 5, in[i].data(), kBytes, static_cast<uint64_t>(i)});
      }
      n.RunUntil([] { return false; }, 200 * kNsPerMs);
      for (int i = kMessages / 2; i < kMessages; ++i) {
        n.t->PostRecv({1, 0, 5, in[i].data(), kBytes, static_cast<uint64_t>(i)});
      }
      ASSERT_TRUE(n.RunUntil([&] { return n.received.size() == kMessages; }));
      for (int i = 0; i < kMessages; ++i) EXPECT_TRUE(in[i] == out[i]) << "message " << i;
      EXPECT_EQ(n.t->counters(1).wire_bytes_received, kMessages * kBytes);
    }
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
    sync.arrive_and_wait();
    EXPECT_TRUE(n.t->Shutdown(10 * kNsPerSec).ok());
  });
}

TEST(FabricTransport, SegmentedPayloadsLandIntactAndCountEveryByteTagged) {
  SegmentedPayloads(false);
}
TEST(FabricTransport, SegmentedPayloadsLandIntactAndCountEveryByteRma) { SegmentedPayloads(true); }

TEST(FabricTransport, AOneSidedWriteLandsBeforeItsNotice) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"w", "w"}, /*rma=*/true, &addresses, 30 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 2u);
  std::vector<unsigned char> region(1 << 20, 0), data(300000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7 + 1);
  std::barrier sync(2);
  uint64_t key = 0;
  RunAll(nodes, [&](Node& n) {
    ASSERT_TRUE(n.t->Connect(addresses, AllPeers(n.rank, static_cast<int>(addresses.size()))).ok());
    if (n.rank == 0) {
      auto k = n.t->RegisterRegion(region.data(), region.size());
      ASSERT_TRUE(k.ok()) << k.status().ToString();
      key = *k;  // out of band, as a two-sided message would carry it
    }
    sync.arrive_and_wait();
    if (n.rank == 1) {
      n.t->PostWrite({0, 0, data.data(), data.size(), key, 4096, 0xC0FFEE, 42});
      ASSERT_TRUE(n.RunUntil([&] { return n.writes_done.size() == 1; }));
      EXPECT_EQ(n.writes_done[0], 42u);
      EXPECT_EQ(n.t->counters(0).writes_sent, 1u);
    } else {
      ASSERT_TRUE(n.RunUntil([&] { return n.landed.size() == 1; }));
      const Node::Landed& l = n.landed[0];
      EXPECT_EQ(l.peer, 1);
      EXPECT_EQ(l.key, key);
      EXPECT_EQ(l.offset, 4096u);
      EXPECT_EQ(l.bytes, data.size());
      EXPECT_EQ(l.imm, 0xC0FFEEu);
      EXPECT_EQ(std::memcmp(region.data() + 4096, data.data(), data.size()), 0);
      EXPECT_EQ(region[4095], 0);
      EXPECT_EQ(n.t->counters(1).writes_received, 1u);
    }
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
    sync.arrive_and_wait();
    EXPECT_TRUE(n.t->Shutdown(10 * kNsPerSec).ok());
  });
}

TEST(FabricTransport, AnAbortReasonReachesThePeer) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"a", "a", "a"}, /*rma=*/false, &addresses, 30 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 3u);
  std::barrier sync(3);
  RunAll(nodes, [&](Node& n) {
    ASSERT_TRUE(n.t->Connect(addresses, AllPeers(n.rank, static_cast<int>(addresses.size()))).ok());
    sync.arrive_and_wait();
    if (n.rank == 2) {
      n.t->Abort("rank 2: the trace is broken", kNsPerSec);
      return;
    }
    ASSERT_TRUE(n.RunUntil([&] { return !n.fatal.empty(); }));
    EXPECT_EQ(n.fatal.front(), "rank 2 stopped the job: rank 2: the trace is broken");
  });
}

TEST(FabricTransport, AnotherJobsRankIsRefused) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"job-a", "job-b"}, /*rma=*/false, &addresses, 2 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 2u);
  RunAll(nodes, [&](Node& n) {
    Status st = n.t->Connect(addresses, AllPeers(n.rank, static_cast<int>(addresses.size())));
    EXPECT_FALSE(st.ok());
    // Either the watch connection or the hello is refused; nobody is taken for a peer.
    EXPECT_NE(st.message().find("rank " + std::to_string(n.rank)), std::string::npos)
        << st.ToString();
  });
  EXPECT_GT(nodes[0].t->rejected_messages() + nodes[1].t->rejected_messages(), 0u);
}

TEST(FabricTransport, ATcpAddressIsNotAFabricOne) {
  std::vector<std::string> addresses;
  auto nodes = MakeNodes({"x", "x"}, /*rma=*/false, &addresses, 2 * kNsPerSec);
  ASSERT_EQ(nodes.size(), 2u);
  addresses[1] = "127.0.0.1:5000";  // what a rank run with --transport tcp publishes
  Status st = nodes[0].t->Connect(addresses, {1});
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(st.message().find("--transport fabric"), std::string::npos) << st.ToString();
}

TEST(FabricTransport, AnUnknownProviderIsNamed) {
  auto loop = std::move(loop::EventLoop::Create(loop::SleepPolicy{false, 0})).value();
  TransportOptions o;
  o.fabric_provider = "no_such_provider";
  auto t = FabricTransport::Create(loop.get(), o);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'no_such_provider' is not available"), std::string::npos)
      << t.status().ToString();
}

}  // namespace
}  // namespace genie::net
