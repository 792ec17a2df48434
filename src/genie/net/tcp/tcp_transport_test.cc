// What only the TCP transport does, beyond the conformance suite every transport passes
// (net/transport_conformance_test.cc): connections per channel, strangers and other jobs on the
// port, heartbeats and silence on its clock, aborts, one-sided writes, flow control, socket
// options. Longer than ~500 lines because every case shares the in-process cluster fixture at
// the top; splitting it would mean a second copy of the fixture.
#include "genie/net/tcp/tcp_transport.h"

#include "genie/env/manual_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "genie/net/socket_util.h"

namespace genie::net {
namespace {

using loop::EventLoop;

// One rank: its loop, its transport, and what completed.
struct Node : TransportEvents {
  std::unique_ptr<EventLoop> loop;
  std::unique_ptr<TcpTransport> t;
  std::vector<uint64_t> sends, recvs, writes, remote_data;
  std::vector<std::pair<uint64_t, uint32_t>> remote_writes;  // (offset, imm)
  std::vector<std::string> fatal;
  void OnSendDone(uint64_t c) override { sends.push_back(c); }
  void OnRecvDone(uint64_t c, Bytes, uint64_t data) override {
    recvs.push_back(c);
    remote_data.push_back(data);
  }
  void OnWriteDone(uint64_t c) override { writes.push_back(c); }
  void OnRemoteWrite(int, uint16_t, uint64_t, Bytes off, Bytes, uint32_t imm) override {
    remote_writes.emplace_back(off, imm);
  }
  void OnFatal(const Status& s) override { fatal.push_back(s.message()); }
  // Drives the loop until pred() or 20 s (a generous bound; failure, not timing, is tested).
  bool RunUntil(const std::function<bool()>& pred) {
    TimeNs deadline = loop->Now() + 20 * kNsPerSec;
    while (!pred()) {
      if (loop->Now() > deadline) return false;
      loop->RunOnce(loop->Now() + 10 * kNsPerMs);
    }
    return true;
  }
};

TransportOptions Opts(int rank, int n, int channels = 1, const std::string& job = "job") {
  TransportOptions o;
  o.rank = rank;
  o.world_size = n;
  o.job_id = job;
  o.channels = channels;
  o.peer_timeout = 10 * kNsPerSec;
  return o;
}

// Creates and connects n ranks, then runs script(rank, node) on one thread per rank.
class Cluster {
 public:
  explicit Cluster(int n, int channels = 1, const std::string& bind = "127.0.0.1",
                   TimeNs peer_timeout = 10 * kNsPerSec, const env::Env* clock = nullptr)
      : nodes_(n) {
    std::vector<std::string> addrs;
    for (int r = 0; r < n; ++r) {
      Node& node = nodes_[r];
      node.loop = std::move(EventLoop::Create()).value();
      auto o = Opts(r, n, channels);
      o.bind_addr = bind;
      o.peer_timeout = peer_timeout;
      o.clock = clock;
      node.t = std::move(TcpTransport::Create(node.loop.get(), o)).value();
      node.t->SetEvents(&node);
      auto a = node.t->Listen();
      EXPECT_TRUE(a.ok()) << a.status().ToString();
      addrs.push_back(*a);
    }
    addrs_ = addrs;
    Run([&](int r, Node& node) {
      ASSERT_TRUE(node.t->Connect(addrs, AllPeers(r, static_cast<int>(addrs.size()))).ok());
    });
  }
  void Run(const std::function<void(int, Node&)>& script) {
    std::vector<std::thread> threads;
    for (int r = 0; r < static_cast<int>(nodes_.size()); ++r) {
      threads.emplace_back([&, r] { script(r, nodes_[r]); });
    }
    for (auto& t : threads) t.join();
  }
  Node& operator[](int r) { return nodes_[r]; }
  const std::string& address(int r) const { return addrs_[r]; }

 private:
  std::vector<Node> nodes_;
  std::vector<std::string> addrs_;
};

std::vector<unsigned char> Pattern(size_t n, int seed) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed * 7) & 0xff);
  return v;
}

// Established TCP connections in /proc/net/tcp whose local or remote port is `port`.
int EstablishedOnPort(int port, std::set<std::string>* local_ips = nullptr) {
  std::ifstream in("/proc/net/tcp");
  std::string line;
  std::getline(in, line);
  int count = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string sl, local, remote, state;
    ls >> sl >> local >> remote >> state;
    if (state != "01") continue;
    int lport = std::stoi(local.substr(9), nullptr, 16);
    int rport = std::stoi(remote.substr(9), nullptr, 16);
    if (rport == port) {
      ++count;  // count the connecting side once
      if (local_ips != nullptr) {
        uint32_t ip = static_cast<uint32_t>(std::stoul(local.substr(0, 8), nullptr, 16));
        in_addr a{ip};
        local_ips->insert(inet_ntoa(a));
      }
    }
    (void)lport;
  }
  return count;
}

int PortOf(const std::string& addr) { return std::stoi(addr.substr(addr.rfind(':') + 1)); }

TEST(TcpTransportTest, TwoRanksTagsArriveOutOfOrderAndPayloadsSurvive) {
  Cluster c(2);
  const size_t sizes[] = {0, 1, 63, 64, 4096, 100'000, 3 << 20, 7};
  std::vector<std::vector<unsigned char>> out, in(8);
  for (int i = 0; i < 8; ++i) out.push_back(Pattern(sizes[i], i));
  std::vector<unsigned char> early(5000, 0xff), filler(777, 0xff);
  c.Run([&](int rank, Node& n) {
    if (rank == 1) {
      for (int i = 0; i < 8; ++i) n.t->PostSend({0, 0, uint64_t(i), out[i].data(), out[i].size(), uint64_t(i)});
      n.t->PostSend({0, 0, 100, out[5].data(), 5000, 100});  // rank 0 posted this one first
      n.t->PostSend({0, 0, 200, nullptr, 777, 200});          // no data: filler, lands as zeros
      ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == 10; }));
      EXPECT_EQ(n.t->counters(0).messages_sent, 10u);
    } else {
      n.t->PostRecv({1, 0, 100, early.data(), 5000, 100});
      // Wait until all 9 others have arrived unclaimed, then claim them in reverse order.
      ASSERT_TRUE(n.RunUntil([&] { return n.t->unexpected_messages() == 9; }));
      n.t->PostRecv({1, 0, 200, filler.data(), 777, 200});
      for (int i = 7; i >= 0; --i) {
        in[i].assign(sizes[i], 0xee);
        n.t->PostRecv({1, 0, uint64_t(i), in[i].data(), in[i].size(), uint64_t(i)});
      }
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 10; }));
      EXPECT_EQ(n.recvs.front(), 100u);  // the pre-posted receive completed first
      EXPECT_EQ(n.t->unexpected_messages(), 0u);
      EXPECT_TRUE(n.fatal.empty());
    }
  });
  for (int i = 0; i < 8; ++i) EXPECT_EQ(in[i], out[i]) << "tag " << i;
  EXPECT_EQ(0, std::memcmp(early.data(), out[5].data(), 5000));
  EXPECT_EQ(filler, std::vector<unsigned char>(777, 0));
  Bytes total = 0;
  for (size_t s : sizes) total += s;
  EXPECT_EQ(c[0].t->counters(1).bytes_received, total + 5000 + 777);
  EXPECT_EQ(c[0].t->counters(1).messages_received, 10u);
}

// Each connection's ends as the network sees them (ECMP hashing ports routes by them): one per
// peer and channel on each side, the two sides' mirror images, the dialler's source port its own.
TEST(TcpTransportTest, ConnectionEndpointsNameBothEndsOfEveryConnection) {
  const int kN = 3, kC = 2;
  Cluster c(kN, kC);
  std::map<std::tuple<int, int, int>, ConnectionEndpoints> seen;  // (rank, peer, channel)
  for (int r = 0; r < kN; ++r) {
    const std::vector<ConnectionEndpoints> e = c[r].t->connection_endpoints();
    EXPECT_EQ(e.size(), static_cast<size_t>((kN - 1) * kC)) << "rank " << r;
    for (const ConnectionEndpoints& x : e) {
      EXPECT_TRUE(seen.emplace(std::make_tuple(r, x.peer, int{x.channel}), x).second);
      EXPECT_EQ(x.local.rfind("127.0.0.1:", 0), 0u) << x.local;
    }
  }
  for (const auto& [key, x] : seen) {
    const auto& [r, peer, channel] = key;
    auto other = seen.find({peer, r, channel});
    ASSERT_NE(other, seen.end());
    EXPECT_EQ(other->second.local, x.remote);
    EXPECT_EQ(other->second.remote, x.local);
    // The lower rank listens: its end is its listening address; the higher dials from its own.
    EXPECT_EQ(r < peer ? x.local : x.remote, c.address(std::min(r, peer)));
  }
}

TEST(TcpTransportTest, FourRanksFourChannelsAllToAllWithExactlyFourConnectionsPerPair) {
  const int kN = 4, kC = 4, kMsgs = 3;
  Cluster c(kN, kC);
  for (int r = 0; r < kN; ++r) {
    for (int p = 0; p < kN; ++p) {
      if (p != r) {
        EXPECT_EQ(c[r].t->counters(p).connections, kC);
      }
    }
  }
  // Independently of our counters: the kernel's table of established connections.
  for (int r = 0; r < kN - 1; ++r) {
    EXPECT_EQ(EstablishedOnPort(PortOf(c.address(r))), (kN - 1 - r) * kC) << "listener of rank " << r;
  }
  c.Run([&](int rank, Node& n) {
    std::vector<std::vector<unsigned char>> bufs;
    std::vector<std::vector<unsigned char>> got;
    // Receives first for even ranks, sends first for odd: both orders must work.
    auto post_recvs = [&] {
      for (int p = 0; p < kN; ++p) {
        if (p == rank) continue;
        for (int ch = kC - 1; ch >= 0; --ch) {
          for (int m = kMsgs - 1; m >= 0; --m) {
            got.emplace_back(1000 + p, 0);
            n.t->PostRecv({p, uint16_t(ch), uint64_t(m), got.back().data(), got.back().size(), 0});
          }
        }
      }
    };
    got.reserve(kN * kC * kMsgs);
    bufs.reserve(kN * kC * kMsgs);
    if (rank % 2 == 0) post_recvs();
    for (int p = 0; p < kN; ++p) {
      if (p == rank) continue;
      for (int ch = 0; ch < kC; ++ch) {
        for (int m = 0; m < kMsgs; ++m) {
          bufs.push_back(Pattern(1000 + rank, rank * 100 + ch * 10 + m));
          n.t->PostSend({p, uint16_t(ch), uint64_t(m), bufs.back().data(), bufs.back().size(), 0});
        }
      }
    }
    if (rank % 2 == 1) post_recvs();
    const size_t expect = (kN - 1) * kC * kMsgs;
    ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == expect && n.recvs.size() == expect; }));
    size_t i = 0;
    for (int p = 0; p < kN; ++p) {
      if (p == rank) continue;
      for (int ch = kC - 1; ch >= 0; --ch) {
        for (int m = kMsgs - 1; m >= 0; --m) {
          EXPECT_EQ(got[i++], Pattern(1000 + p, p * 100 + ch * 10 + m)) << rank << "<-" << p;
        }
      }
    }
    EXPECT_TRUE(n.fatal.empty());
  });
  c.Run([&](int, Node& n) { EXPECT_TRUE(n.t->Shutdown(5 * kNsPerSec).ok()); });
  for (int r = 0; r < kN; ++r) {
    for (int p = 0; p < kN; ++p) {
      if (p != r) {
        EXPECT_EQ(c[r].t->counters(p).connections, 0);
      }
    }
  }
}

// Opens a raw TCP connection to `addr` and sends `bytes`; returns the fd.
int Stranger(const std::string& addr, const std::string& bytes) {
  auto hp = SplitHostPort(addr).value();
  auto sa = ResolveAddress(hp.first, hp.second).value();
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  EXPECT_EQ(connect(fd, sa.get(), sa.length), 0);
  EXPECT_EQ(send(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  return fd;
}

TEST(TcpTransportTest, GarbageAndWrongJobConnectionsAreRejectedAndTheRunContinues) {
  Cluster c(2);
  std::string garbage(kFrameHeaderBytes, 'x');
  FrameHeader h;
  h.type = FrameType::kHello;
  h.job = JobHash("intruder");
  h.src = 1;
  h.dst = 0;
  h.length = 8;
  h.offset = 2;
  unsigned char hdr[kFrameHeaderBytes];
  EncodeFrame(h, hdr);
  std::string wrong_job(reinterpret_cast<char*>(hdr), kFrameHeaderBytes);
  wrong_job += "intruder";
  int s1 = Stranger(c.address(0), garbage);
  int s2 = Stranger(c.address(0), wrong_job);
  std::vector<unsigned char> a = Pattern(10000, 1), b(10000);
  c.Run([&](int rank, Node& n) {
    if (rank == 0) {
      ASSERT_TRUE(n.RunUntil([&] { return n.t->rejected_connections() == 2; }));
      n.t->PostRecv({1, 0, 9, b.data(), b.size(), 1});
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 1; }));
    } else {
      n.t->PostSend({0, 0, 9, a.data(), a.size(), 1});
      ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == 1; }));
    }
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
  });
  EXPECT_EQ(a, b);
  // Both strangers were hung up on.
  char buf[8];
  EXPECT_EQ(recv(s1, buf, sizeof(buf), 0), 0);
  EXPECT_EQ(recv(s2, buf, sizeof(buf), 0), 0);
  close(s1);
  close(s2);
  c.Run([&](int, Node& n) { EXPECT_TRUE(n.t->Shutdown(5 * kNsPerSec).ok()); });
}

TEST(TcpTransportTest, PeerThatVanishesIsFatalAndNamed) {
  Cluster c(3);
  std::vector<unsigned char> b(100);
  c.Run([&](int rank, Node& n) {
    if (rank == 2) {
      n.t.reset();  // closes every socket without goodbye, as a crash would
      return;
    }
    if (rank == 0) {
      n.t->PostRecv({2, 0, 1, b.data(), b.size(), 1});  // never comes
      ASSERT_TRUE(n.RunUntil([&] { return !n.fatal.empty(); }));
      EXPECT_NE(n.fatal.front().find("rank 0 lost rank 2"), std::string::npos) << n.fatal.front();
      EXPECT_NE(n.fatal.front().find("without goodbye"), std::string::npos) << n.fatal.front();
    }
  });
}

TEST(TcpTransportTest, AnAbortingPeerIsReportedWithItsReasonNotAsALostPeer) {
  Cluster c(3);
  std::vector<unsigned char> b(100);
  c.Run([&](int rank, Node& n) {
    if (rank == 2) {
      // Queued data behind the abort is dropped; the reason still goes out.
      std::vector<unsigned char> big(8 << 20);
      for (uint64_t t = 9; t < 12; ++t) n.t->PostSend({0, 0, t, big.data(), big.size(), t});
      n.t->Abort("rank 2: rank 7 has not been heard from", kNsPerSec);
      return;
    }
    n.t->PostRecv({2, 0, 1, b.data(), b.size(), 1});  // never comes
    ASSERT_TRUE(n.RunUntil([&] { return !n.fatal.empty(); }));
    EXPECT_EQ(n.fatal.front(), "rank 2 stopped the job: rank 2: rank 7 has not been heard from");
  });
}

// Drives the node's loop for `d`, as a running but idle rank does.
void Drive(Node& n, TimeNs d) {
  const TimeNs until = n.loop->Now() + d;
  while (n.loop->Now() < until) n.loop->RunOnce(until);
}

// Liveness runs on the injected clock: while it stands still, a peer that stopped driving its
// loop is not blamed however many ticks pass; as it moves, the peer is found silent once.
// (The rules themselves are tested on a ManualEnv in net/liveness_test.cc.)
TEST(TcpTransportTest, PeerThatStopsAnsweringIsFatalOnceOnTheTransportsClock) {
  env::ManualEnv clock;
  const TimeNs timeout = 40 * kNsPerMs;  // ticks every 10 ms
  Cluster c(2, 2, "127.0.0.1", timeout, &clock);
  // Rank 1 no longer drives its loop, as if SIGSTOPped or its host hung: its kernel still
  // acknowledges our bytes, so TCP alone would notice nothing; only its silence tells.
  Node& n = c[0];
  Drive(n, 20 * timeout);
  EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
  // Time moves in steps shorter than a tick, so none of it looks like this rank's own stall.
  ASSERT_TRUE(n.RunUntil([&] {
    clock.Advance(kNsPerMs);
    return !n.fatal.empty();
  }));
  clock.Advance(10 * timeout);
  Drive(n, 5 * timeout);
  ASSERT_EQ(n.fatal.size(), 1u) << n.fatal.back();
  const std::string& m = n.fatal.front();
  EXPECT_NE(m.find("rank 1 (" + c.address(1) + ") has not been heard from for"), std::string::npos)
      << m;
  EXPECT_NE(m.find("--peer-timeout 40.000 ms"), std::string::npos) << m;
  EXPECT_EQ(n.t->counters(1).connections, 0);  // given up on: closed
}

TEST(TcpTransportTest, IdleRanksStayAliveOnHeartbeatsWhichAreNotCounted) {
  Cluster c(3, 2, "127.0.0.1", 200 * kNsPerMs);
  c.Run([&](int, Node& n) {
    Drive(n, 1500 * kNsPerMs);
    EXPECT_TRUE(n.fatal.empty()) << n.fatal.front();
  });
  for (int r = 0; r < 3; ++r) {
    for (int p = 0; p < 3; ++p) {
      if (p == r) continue;
      const PeerCounters& k = c[r].t->counters(p);
      EXPECT_EQ(k.messages_sent + k.bytes_sent + k.messages_received + k.bytes_received, 0u);
      EXPECT_EQ(k.wire_bytes_sent + k.wire_bytes_received, 0u);  // heartbeats are no progress
      EXPECT_EQ(k.connections, 2);
    }
  }
  c.Run([&](int, Node& n) { EXPECT_TRUE(n.t->Shutdown(5 * kNsPerSec).ok()); });
}

// Size mismatches (either order) are in the conformance suite (net/transport_conformance_test.cc).

// A message's bytes count as they leave and arrive, before it completes (the watchdog judges
// progress by them: one message may last many times --peer-timeout on a slow link). The
// receiver reads nothing until the send was posted, so the first sendmsg stops when the socket
// buffers (a few MiB) are full; it then reads 4 MiB per loop turn, so 64 MiB takes several.
TEST(TcpTransportTest, PayloadBytesCountAsTheyMoveBeforeTheMessageCompletes) {
  Cluster c(2);
  constexpr Bytes kBig = Bytes{64} << 20;
  std::vector<unsigned char> out(kBig, 0x5a), in(kBig);
  bool partial_sent = false, partial_received = false;
  std::atomic<bool> posted{false};
  c.Run([&](int rank, Node& n) {
    const PeerCounters& k = n.t->counters(1 - rank);
    if (rank == 0) {
      n.t->PostSend({1, 0, 7, out.data(), kBig, 1});
      posted = true;
      ASSERT_TRUE(n.RunUntil([&] {
        partial_sent |= n.sends.empty() && k.wire_bytes_sent > 0 && k.wire_bytes_sent < kBig;
        return !n.sends.empty();
      }));
      EXPECT_EQ(k.wire_bytes_sent, kBig);
    } else {
      while (!posted) std::this_thread::yield();
      n.t->PostRecv({0, 0, 7, in.data(), kBig, 2});
      ASSERT_TRUE(n.RunUntil([&] {
        partial_received |= n.recvs.empty() && k.wire_bytes_received > 0 &&
                            k.wire_bytes_received < kBig && k.bytes_received == 0;
        return !n.recvs.empty();
      }));
      EXPECT_EQ(k.wire_bytes_received, kBig);
      EXPECT_EQ(k.bytes_received, kBig);
    }
  });
  EXPECT_TRUE(partial_sent);
  EXPECT_TRUE(partial_received);
  EXPECT_EQ(in, out);
  c.Run([&](int, Node& n) { EXPECT_TRUE(n.t->Shutdown(5 * kNsPerSec).ok()); });
}

TEST(TcpTransportTest, RemoteDataTravelsWithEachMessageExpectedOrNot) {
  Cluster c(2);
  std::vector<unsigned char> a(100, 1);
  c.Run([&](int rank, Node& n) {
    if (rank == 1) {
      n.t->PostRecv({0, 0, 1, nullptr, 100, 1});  // posted before the message arrives
      ASSERT_TRUE(n.RunUntil([&] { return n.t->unexpected_messages() == 1; }));
      n.t->PostRecv({0, 0, 2, nullptr, 0, 2});  // claims the unexpected one
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 2; }));
      std::map<uint64_t, uint64_t> by_cookie;
      for (size_t i = 0; i < 2; ++i) by_cookie[n.recvs[i]] = n.remote_data[i];
      EXPECT_EQ(by_cookie, (std::map<uint64_t, uint64_t>{{1, 0xfeedULL << 40}, {2, 42}}));
    } else {
      n.t->PostSend({1, 0, 2, nullptr, 0, 2, 42});
      n.t->PostSend({1, 0, 1, a.data(), 100, 1, 0xfeedULL << 40});
      ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == 2; }));
      n.t->PostSend({0, 0, 3, nullptr, 0, 3, 7});  // to itself
      n.t->PostRecv({0, 0, 3, nullptr, 0, 3});
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 1; }));
      EXPECT_EQ(n.remote_data, (std::vector<uint64_t>{7}));
    }
  });
}

TEST(TcpTransportTest, OneSidedWriteWithImmediateLandsAtTheOffset) {
  Cluster c(2, 2);
  std::vector<unsigned char> region(1 << 20, 0);
  auto key = c[0].t->RegisterRegion(region.data(), region.size());
  ASSERT_TRUE(key.ok());
  std::vector<unsigned char> src = Pattern(300'000, 5);
  c.Run([&](int rank, Node& n) {
    if (rank == 1) {
      n.t->PostWrite({0, 1, src.data(), src.size(), *key, 4096, 0xabcd, 7});
      n.t->PostWrite({0, 0, src.data(), 10, *key, region.size() - 5, 1, 8});  // out of bounds
      ASSERT_TRUE(n.RunUntil([&] { return n.writes.size() == 2; }));
    } else {
      ASSERT_TRUE(n.RunUntil([&] { return !n.remote_writes.empty() && !n.fatal.empty(); }));
      EXPECT_EQ(n.remote_writes.front(), std::make_pair(Bytes{4096}, uint32_t{0xabcd}));
      EXPECT_NE(n.fatal.front().find("outside the registered memory"), std::string::npos)
          << n.fatal.front();
    }
  });
  EXPECT_EQ(0, std::memcmp(region.data() + 4096, src.data(), src.size()));
  EXPECT_EQ(region[4095], 0);
}

TEST(TcpTransportTest, BindsOnlyTheGivenAddressForListeningAndConnecting) {
  Cluster c(3, 2, "127.0.0.2");
  EXPECT_EQ(c.address(0).rfind("127.0.0.2:", 0), 0u) << c.address(0);
  std::set<std::string> sources;
  EXPECT_EQ(EstablishedOnPort(PortOf(c.address(0)), &sources), 4);
  EXPECT_EQ(sources, std::set<std::string>{"127.0.0.2"});
}

// --bind to an address this host lacks: bad input naming it (the run exits 2), not an I/O
// failure a launcher would blame on another rank.
TEST(TcpTransportTest, ListeningOnAnAddressThisHostLacksIsBadInputNamingIt) {
  auto loop = std::move(EventLoop::Create()).value();
  auto o = Opts(1, 2);
  o.bind_addr = "192.0.2.77";
  auto t = std::move(TcpTransport::Create(loop.get(), o)).value();
  auto a = t->Listen();
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), Status::Code::kInvalidArgument) << a.status().ToString();
  EXPECT_NE(a.status().message().find("rank 1: cannot listen on 192.0.2.77: it is not an address "
                                      "of this host"),
            std::string::npos)
      << a.status().message();
}

TEST(TcpTransportTest, FlowControlBoundsUnexpectedDataAndResumesForAWaitingReceive) {
  Cluster c(2);
  constexpr int kMsgs = 80;
  constexpr size_t kSize = 1 << 20;
  std::vector<std::vector<unsigned char>> out, in(kMsgs);
  for (int i = 0; i < kMsgs; ++i) out.emplace_back(kSize, static_cast<unsigned char>(i + 1));
  c.Run([&](int rank, Node& n) {
    if (rank == 1) {
      for (int i = 0; i < kMsgs; ++i) n.t->PostSend({0, 0, uint64_t(i), out[i].data(), kSize, uint64_t(i)});
      ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == kMsgs; }));
      return;
    }
    ASSERT_TRUE(n.RunUntil([&] { return n.t->unexpected_messages() >= 64; }));
    TimeNs until = n.loop->Now() + 200 * kNsPerMs;
    while (n.loop->Now() < until) n.loop->RunOnce(until);
    // 64 MiB held, then the connection is no longer read: TCP holds the rest at the sender.
    EXPECT_EQ(n.t->unexpected_messages(), 64u);
    for (int i = kMsgs - 1; i >= 0; --i) {
      in[i].assign(kSize, 0);
      n.t->PostRecv({1, 0, uint64_t(i), in[i].data(), kSize, uint64_t(i)});
    }
    ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == kMsgs; }));
    EXPECT_TRUE(n.fatal.empty());
  });
  for (int i = 0; i < kMsgs; ++i) EXPECT_EQ(in[i], out[i]) << i;
}

// Payloads nobody keeps (a receive into nullptr; filler that arrives before its receive) are
// dropped in the kernel (MSG_TRUNC): exactly their bytes, so the frame after them still parses.
TEST(TcpTransportTest, DiscardedPayloadsLeaveTheNextFrameIntact) {
  Cluster c(2);
  constexpr size_t kBig = 8 << 20;
  std::vector<unsigned char> big = Pattern(kBig, 1), last = Pattern(100'000, 2), in(100'000, 0xee);
  c.Run([&](int rank, Node& n) {
    if (rank == 1) {
      n.t->PostSend({0, 0, 1, big.data(), kBig, 1});   // real data, discarded by the receive
      n.t->PostSend({0, 0, 2, nullptr, kBig + 3, 2});  // filler, arrives unexpected
      n.t->PostSend({0, 0, 3, last.data(), last.size(), 3});
      ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == 3; }));
    } else {
      n.t->PostRecv({1, 0, 1, nullptr, kBig, 1});
      n.t->PostRecv({1, 0, 3, in.data(), in.size(), 3});
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 2; }));
      EXPECT_EQ(n.t->unexpected_messages(), 1u);
      n.t->PostRecv({1, 0, 2, nullptr, kBig + 3, 2});
      ASSERT_TRUE(n.RunUntil([&] { return n.recvs.size() == 3; }));
      EXPECT_TRUE(n.fatal.empty());
    }
  });
  EXPECT_EQ(in, last);
  EXPECT_EQ(c[0].t->counters(1).bytes_received, 2 * kBig + 3 + last.size());
  EXPECT_EQ(c[0].t->counters(1).messages_received, 3u);
}

TEST(TcpTransportTest, MessagesToSelfAreMatchedLocally) {
  Cluster c(2);
  std::vector<unsigned char> a = Pattern(5000, 3), b(5000), z(10, 0xff);
  Node& n = c[0];
  n.t->PostSend({0, 0, 1, a.data(), a.size(), 1});  // before its receive
  n.t->PostRecv({0, 0, 1, b.data(), b.size(), 2});
  n.t->PostRecv({0, 0, 2, z.data(), z.size(), 3});  // before its send, which has no data
  n.t->PostSend({0, 0, 2, nullptr, z.size(), 4});
  ASSERT_TRUE(n.RunUntil([&] { return n.sends.size() == 2 && n.recvs.size() == 2; }));
  EXPECT_EQ(a, b);
  EXPECT_EQ(z, std::vector<unsigned char>(10, 0));
  EXPECT_TRUE(n.fatal.empty());
  EXPECT_EQ(n.t->counters(1).messages_sent, 0u);
}

TEST(TcpTransportTest, UnknownCongestionControlIsAClearError) {
  auto loop = std::move(EventLoop::Create()).value();
  auto o = Opts(0, 2);
  o.tcp_congestion = "no-such-cc";
  auto t = std::move(TcpTransport::Create(loop.get(), o)).value();
  auto r = t->Listen();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'no-such-cc'"), std::string::npos);
  EXPECT_NE(r.status().message().find("cubic"), std::string::npos) << r.status().message();
  o.tcp_congestion = "reno";
  auto t2 = std::move(TcpTransport::Create(loop.get(), o)).value();
  EXPECT_TRUE(t2->Listen().ok());
}

TEST(SocketOptionsTest, DataSocketsGetNodelayTimeoutsKeepaliveAndCongestion) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  DataSocketOptions o;
  o.user_timeout = 9 * kNsPerSec;
  o.congestion = "reno";
  ASSERT_TRUE(SetDataSocketOptions(fd, o).ok());
  auto get = [&](int level, int name) {
    int v = -1;
    socklen_t len = sizeof(v);
    getsockopt(fd, level, name, &v, &len);
    return v;
  };
  EXPECT_EQ(get(IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_USER_TIMEOUT), 9000);
  EXPECT_EQ(get(SOL_SOCKET, SO_KEEPALIVE), 1);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPIDLE), 3);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPINTVL), 1);
  EXPECT_EQ(get(IPPROTO_TCP, TCP_KEEPCNT), 3);
  // The kernel reports double what was set; without CAP_NET_ADMIN it is capped at wmem_max.
  int wmem_max = 0;
  std::ifstream("/proc/sys/net/core/wmem_max") >> wmem_max;
  int sndbuf = get(SOL_SOCKET, SO_SNDBUF);
  EXPECT_TRUE(sndbuf == 2 * (4 << 20) || sndbuf == 2 * std::min(4 << 20, wmem_max)) << sndbuf;
  char cc[16] = {};
  socklen_t len = sizeof(cc);
  getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len);
  EXPECT_STREQ(cc, "reno");
  close(fd);
}

TEST(TcpTransportTest, ConnectTimesOutNamingTheMissingRank) {
  auto loop = std::move(EventLoop::Create()).value();
  auto o = Opts(0, 2);
  o.peer_timeout = 200 * kNsPerMs;
  auto t = std::move(TcpTransport::Create(loop.get(), o)).value();
  auto addr = t->Listen();
  ASSERT_TRUE(addr.ok());
  Status st = t->Connect({*addr, "127.0.0.1:9"}, {1});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("rank 1 (0 of 1 connections"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace genie::net
