// The transport conformance suite: what every net::Transport must do, written against the
// interface only and run over every transport (TCP; the faulty transport with no faults;
// libfabric over tcp;ofi_rxm, two-sided and with --fabric-rma) with 2, 3, 4 and 7 ranks. A new
// transport joins by adding one entry to Kinds().
// Ranks are threads, each with its own EventLoop, as ranks are processes in real runs.
#include <barrier>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "genie/loop/event_loop.h"
#include "genie/net/faulty_transport.h"
#include "genie/net/transport.h"
#include "genie/net/transport_factory.h"

namespace genie::net {
namespace {

struct TransportKind {
  std::string name;
  TransportFactory make;
};

// The fabric transport with its mode set, whatever options the test passes.
TransportFactory Fabric(bool rma) {
  return [rma](loop::EventLoop* loop, const TransportOptions& o) {
    TransportOptions f = o;
    f.fabric_provider = "tcp;ofi_rxm";
    f.fabric_rma = rma;
    return FabricTransportFactory()(loop, f);
  };
}

std::vector<TransportKind> Kinds() {
  return {
      {"tcp", DefaultTransportFactory()},
      {"faulty_tcp_no_faults", FaultyTransport::Wrap(DefaultTransportFactory(), {})},
      {"fabric", Fabric(false)},
      {"fabric_rma", Fabric(true)},
  };
}

struct Param {
  TransportKind kind;
  int ranks;
};

void PrintTo(const Param& p, std::ostream* os) { *os << p.kind.name << " with " << p.ranks << " ranks"; }

std::string ParamName(const testing::TestParamInfo<Param>& info) {
  return info.param.kind.name + "_" + std::to_string(info.param.ranks) + "ranks";
}

std::vector<Param> Params() {
  std::vector<Param> out;
  for (const TransportKind& k : Kinds()) {
    for (int n : {2, 3, 4, 7}) out.push_back({k, n});
  }
  return out;
}

// One rank: its loop, its transport, and what completed.
struct Rank : TransportEvents {
  int rank = 0;
  std::unique_ptr<loop::EventLoop> loop;
  std::unique_ptr<Transport> t;
  std::vector<uint64_t> sends;
  std::map<uint64_t, Bytes> recvs;  // cookie -> bytes
  std::vector<std::string> fatal;
  void OnSendDone(uint64_t c) override { sends.push_back(c); }
  void OnRecvDone(uint64_t c, Bytes bytes, uint64_t) override { recvs[c] = bytes; }
  void OnWriteDone(uint64_t) override {}
  void OnRemoteWrite(int, uint16_t, uint64_t, Bytes, Bytes, uint32_t) override {}
  void OnFatal(const Status& s) override { fatal.push_back(s.message()); }
  // Drives the loop until pred() or 60 s (a bound for hangs; failure, not timing, is tested).
  bool RunUntil(const std::function<bool()>& pred) {
    const TimeNs deadline = loop->Now() + 60 * kNsPerSec;
    while (!pred()) {
      if (loop->Now() > deadline) return false;
      loop->RunOnce(loop->Now() + 10 * kNsPerMs);
    }
    return true;
  }
  // A few more loop turns, for anything that would still (wrongly) come.
  void Settle() {
    for (int i = 0; i < 20; ++i) loop->RunOnce(loop->Now() + kNsPerMs);
  }
};

class TransportConformanceTest : public testing::TestWithParam<Param> {
 protected:
  static constexpr int kChannels = 3;

  void SetUp() override {
    const Param& p = GetParam();
    n_ = p.ranks;
    ranks_ = std::vector<Rank>(static_cast<size_t>(n_));
    std::vector<std::string> addresses;
    for (int r = 0; r < n_; ++r) {
      Rank& k = ranks_[static_cast<size_t>(r)];
      k.rank = r;
      k.loop = std::move(loop::EventLoop::Create(loop::SleepPolicy{false, 0})).value();
      TransportOptions o;
      o.rank = r;
      o.world_size = n_;
      o.job_id = "conformance";
      o.channels = kChannels;
      o.peer_timeout = 60 * kNsPerSec;  // liveness is not what this suite tests
      auto t = p.kind.make(k.loop.get(), o);
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      k.t = std::move(*t);
      k.t->SetEvents(&k);
      auto a = k.t->Listen();
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      addresses.push_back(*a);
    }
    Run([&](Rank& k) {
      Status st = k.t->Connect(addresses, AllPeers(k.rank, static_cast<int>(addresses.size())));
      ASSERT_TRUE(st.ok()) << st.ToString();
    });
  }

  void TearDown() override {
    Run([](Rank& k) {
      if (k.t) k.t->Shutdown(k.fatal.empty() ? 30 * kNsPerSec : 0);
    });
  }

  // Runs script on one thread per rank; `sync` lines the ranks up (a test-side barrier).
  void Run(const std::function<void(Rank&)>& script) {
    std::vector<std::thread> threads;
    for (Rank& k : ranks_) threads.emplace_back([&] { script(k); });
    for (auto& t : threads) t.join();
  }

  int n_ = 0;
  std::vector<Rank> ranks_;
};

// Payload of the message from -> to with tag on channel, `bytes` long.
std::vector<unsigned char> Payload(int from, int to, uint64_t tag, int ch, size_t bytes) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    v[i] = static_cast<unsigned char>((i * 131 + from * 17 + to * 29 + tag * 7 + ch * 3) & 0xff);
  }
  return v;
}

size_t SizeOf(uint64_t tag) {
  static const size_t kSizes[] = {0, 1, 4096 + 3, 0, 65536 + 11, 300};
  return kSizes[tag % 6];
}

TEST_P(TransportConformanceTest, EveryPairExchangesTaggedMessagesBothWaysOnEveryChannel) {
  constexpr uint64_t kTags = 6;
  std::barrier sync(n_);
  Run([&](Rank& k) {
    const int me = k.rank;
    // in[(peer, tag, ch)]; even tags are received into buffers posted before anything is
    // sent, odd tags only after their message arrived (held by the transport as unexpected).
    std::map<std::tuple<int, uint64_t, int>, std::vector<unsigned char>> in, out;
    uint64_t cookie = 0;
    std::map<uint64_t, std::tuple<int, uint64_t, int>> which;
    auto post_recv = [&](int p, uint64_t tag, int ch) {
      auto& buf = in[{p, tag, ch}];
      buf.assign(SizeOf(tag), 0xEE);
      which[cookie] = {p, tag, ch};
      k.t->PostRecv({p, static_cast<uint16_t>(ch), tag, buf.data(), buf.size(), cookie++});
    };
    int expected_unexpected = 0;
    for (int p = 0; p < n_; ++p) {
      if (p == me) continue;
      for (uint64_t tag = 0; tag < kTags; tag += 2) {
        for (int ch = 0; ch < kChannels; ++ch) post_recv(p, tag, ch);
      }
      expected_unexpected += static_cast<int>(kTags / 2) * kChannels;
    }
    sync.arrive_and_wait();
    int sends = 0;
    for (int p = 0; p < n_; ++p) {
      if (p == me) continue;
      for (uint64_t tag = 0; tag < kTags; ++tag) {
        for (int ch = 0; ch < kChannels; ++ch) {
          auto& buf = out[{p, tag, ch}] = Payload(me, p, tag, ch, SizeOf(tag));
          k.t->PostSend({p, static_cast<uint16_t>(ch), tag, buf.data(), buf.size(),
                         1000000 + static_cast<uint64_t>(sends++)});
        }
      }
    }
    ASSERT_TRUE(k.RunUntil([&] {
      return static_cast<int>(k.t->unexpected_messages()) == expected_unexpected;
    })) << "rank " << me << ": " << k.t->unexpected_messages() << " held";
    for (int p = 0; p < n_; ++p) {
      if (p == me) continue;
      for (uint64_t tag = 1; tag < kTags; tag += 2) {
        for (int ch = 0; ch < kChannels; ++ch) post_recv(p, tag, ch);
      }
    }
    ASSERT_TRUE(k.RunUntil([&] {
      return k.recvs.size() == which.size() && static_cast<int>(k.sends.size()) == sends;
    }));
    EXPECT_TRUE(k.fatal.empty()) << k.fatal.front();
    EXPECT_EQ(k.t->unexpected_messages(), 0u);
    for (const auto& [c, key] : which) {
      const auto& [p, tag, ch] = key;
      EXPECT_EQ(k.recvs[c], SizeOf(tag));
      EXPECT_EQ(in[key], Payload(p, me, tag, ch, SizeOf(tag)))
          << "rank " << me << " from " << p << " tag " << tag << " channel " << ch;
    }
    for (int p = 0; p < n_; ++p) {
      if (p == me) continue;
      EXPECT_EQ(k.t->counters(p).messages_received, kTags * kChannels);
      EXPECT_EQ(k.t->counters(p).messages_sent, kTags * kChannels);
    }
    sync.arrive_and_wait();  // nobody shuts down while others still receive
  });
}

TEST_P(TransportConformanceTest, MultiMebibyteMessagesArriveIntactEitherOrder) {
  const size_t kBytes = (size_t{2} << 20) + 7;
  std::barrier sync(n_);
  Run([&](Rank& k) {
    const int me = k.rank;
    const std::vector<unsigned char> out = Payload(me, 0, 5, 0, kBytes);
    std::vector<std::vector<unsigned char>> in(static_cast<size_t>(n_));
    // From lower ranks the receive is posted first; from higher ranks the message comes first.
    int lower = 0;
    for (int p = 0; p < me; ++p, ++lower) {
      in[static_cast<size_t>(p)].assign(kBytes, 0);
      k.t->PostRecv({p, 1, 5, in[static_cast<size_t>(p)].data(), kBytes, static_cast<uint64_t>(p)});
    }
    sync.arrive_and_wait();
    for (int p = 0; p < n_; ++p) {
      if (p != me) k.t->PostSend({p, 1, 5, out.data(), kBytes, static_cast<uint64_t>(p)});
    }
    const size_t higher = static_cast<size_t>(n_ - 1 - me);
    ASSERT_TRUE(k.RunUntil([&] { return k.t->unexpected_messages() == higher; }));
    for (int p = me + 1; p < n_; ++p) {
      in[static_cast<size_t>(p)].assign(kBytes, 0);
      k.t->PostRecv({p, 1, 5, in[static_cast<size_t>(p)].data(), kBytes, static_cast<uint64_t>(p)});
    }
    ASSERT_TRUE(k.RunUntil([&] {
      return static_cast<int>(k.recvs.size()) == n_ - 1 && static_cast<int>(k.sends.size()) == n_ - 1;
    }));
    EXPECT_TRUE(k.fatal.empty()) << k.fatal.front();
    for (int p = 0; p < n_; ++p) {
      if (p == me) continue;
      EXPECT_EQ(k.recvs[static_cast<uint64_t>(p)], kBytes);
      EXPECT_TRUE(in[static_cast<size_t>(p)] == Payload(p, 0, 5, 0, kBytes)) << me << "<-" << p;
      EXPECT_EQ(k.t->counters(p).bytes_received, kBytes);
    }
    (void)lower;
    sync.arrive_and_wait();
  });
}

// Rank 1 sends 100 bytes with tag 77 to rank 0, which expects 50: reported once, on rank 0,
// naming the peer, the tag and both sizes; `recv_first` picks which comes first.
void SizeMismatch(std::vector<Rank>& ranks, bool recv_first,
                  const std::function<void(const std::function<void(Rank&)>&)>& run) {
  std::vector<unsigned char> a(100, 1), b(50);
  const int n = static_cast<int>(ranks.size());
  std::barrier sync(n);
  run([&](Rank& k) {
    if (k.rank == 0 && recv_first) k.t->PostRecv({1, 2, 77, b.data(), b.size(), 9});
    sync.arrive_and_wait();
    if (k.rank == 1) {
      k.t->PostSend({0, 2, 77, a.data(), a.size(), 9});
      ASSERT_TRUE(k.RunUntil([&] { return k.sends.size() == 1; }));
    }
    if (k.rank == 0) {
      if (!recv_first) {
        ASSERT_TRUE(k.RunUntil([&] { return k.t->unexpected_messages() == 1; }));
        k.t->PostRecv({1, 2, 77, b.data(), b.size(), 9});
      }
      ASSERT_TRUE(k.RunUntil([&] { return !k.fatal.empty(); }));
      k.Settle();
      ASSERT_EQ(k.fatal.size(), 1u) << k.fatal.back();
      const std::string& m = k.fatal.front();
      EXPECT_NE(m.find("rank 1 sent 100 bytes with tag 77 on channel 2"), std::string::npos) << m;
      EXPECT_NE(m.find("rank 0 posted a receive of 50 bytes"), std::string::npos) << m;
      EXPECT_TRUE(k.recvs.empty());
    }
    sync.arrive_and_wait();
    // Ranks not involved are not disturbed (rank 1 may see rank 0 close the flow it broke).
    if (k.rank >= 2) {
      EXPECT_TRUE(k.fatal.empty()) << k.fatal.front();
    }
  });
}

TEST_P(TransportConformanceTest, SizeMismatchWithTheReceivePostedFirstIsReportedOnce) {
  SizeMismatch(ranks_, true, [&](const auto& s) { Run(s); });
}

TEST_P(TransportConformanceTest, SizeMismatchWithTheMessageFirstIsReportedOnce) {
  SizeMismatch(ranks_, false, [&](const auto& s) { Run(s); });
}

TEST_P(TransportConformanceTest, ALostPeerIsReportedNamingIt) {
  const int lost = n_ - 1;
  std::barrier sync(n_);
  std::vector<unsigned char> b(10);
  Run([&](Rank& k) {
    if (k.rank != lost) k.t->PostRecv({lost, 0, 3, b.data(), b.size(), 1});  // never comes
    sync.arrive_and_wait();
    if (k.rank == lost) {
      k.t.reset();  // gone without a word, as a crashed process
      return;
    }
    ASSERT_TRUE(k.RunUntil([&] { return !k.fatal.empty(); }));
    const std::string want = "rank " + std::to_string(k.rank) + " lost rank " + std::to_string(lost);
    EXPECT_NE(k.fatal.front().find(want), std::string::npos) << k.fatal.front();
    EXPECT_TRUE(k.recvs.empty());
  });
}

INSTANTIATE_TEST_SUITE_P(AllTransports, TransportConformanceTest, testing::ValuesIn(Params()),
                         ParamName);

}  // namespace
}  // namespace genie::net
