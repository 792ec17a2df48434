#include "genie/net/tcp/probe_rtt_watch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace genie::net {
namespace {

constexpr TimeNs kMs = kNsPerMs;

// Episodes begin on the first sample in PROBE_RTT and end on the first one out of it (or when
// the socket closes); one still open counts up to now. Only a busy connection's count: one with
// data waiting at some sample of it.
TEST(ProbeRttWatch, BusyEpisodesAreTimedBetweenSamples) {
  constexpr int64_t kBusy = ProbeRttWatch::kBacklogBytes + 1;
  ProbeRttWatch w;
  w.Sample(5, false, kBusy, 0);
  w.Sample(5, true, kBusy, 100 * kMs);
  w.Sample(5, true, 0, 110 * kMs);  // still in the same one
  w.Sample(7, true, 0, 150 * kMs);  // idle so far
  w.Sample(7, true, kBusy, 160 * kMs);  // busy: counts from its start
  w.Sample(9, true, 100, 170 * kMs);    // a few bytes of control: never counts
  w.Sample(5, false, 0, 300 * kMs);
  ProbeRttTotals t = w.Totals(320 * kMs);
  EXPECT_EQ(t.episodes, 2);
  EXPECT_EQ(t.ns, 200 * kMs + 170 * kMs);
  EXPECT_EQ(t.last_begin, 150 * kMs);
  w.Forget(7, 350 * kMs);
  w.Sample(9, false, 0, 360 * kMs);
  w.Sample(5, true, kBusy, 10'300 * kMs);  // the next one, 10 s later
  t = w.Totals(10'400 * kMs);
  EXPECT_EQ(t.episodes, 3);
  EXPECT_EQ(t.ns, 200 * kMs + 200 * kMs + 100 * kMs);
  EXPECT_EQ(t.last_begin, 10'300 * kMs);
}

// A real socket: under bbr the kernel reports its mode (not PROBE_RTT on a fresh connection,
// whose gains are 1 before it has a bandwidth estimate, nor in STARTUP once data moved); under
// another congestion control, nothing.
TEST(ProbeRttWatch, ReadsAConnectedSocketsBbrMode) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(client, 0);
  const bool bbr = setsockopt(client, IPPROTO_TCP, TCP_CONGESTION, "bbr", 3) == 0;
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  if (bbr) {
    auto in = ProbeRttWatch::InProbeRtt(client);
    ASSERT_TRUE(in.has_value());
    EXPECT_FALSE(*in);
    std::vector<char> data(256 << 10);
    size_t sent = 0, got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got < data.size() && std::chrono::steady_clock::now() < deadline) {
      if (sent < data.size()) {
        const ssize_t n = send(client, data.data() + sent, data.size() - sent, MSG_DONTWAIT);
        if (n > 0) sent += static_cast<size_t>(n);
      }
      const ssize_t m = recv(server, data.data(), data.size(), MSG_DONTWAIT);
      if (m > 0) got += static_cast<size_t>(m);
    }
    ASSERT_EQ(got, data.size()) << "loopback moved " << got << " bytes in 10 s";
    in = ProbeRttWatch::InProbeRtt(client);
    ASSERT_TRUE(in.has_value());
    EXPECT_FALSE(*in);
    EXPECT_GT(ProbeRttWatch::Backlog(client), -1);
  } else {
    GTEST_LOG_(INFO) << "no bbr in this kernel (modprobe tcp_bbr): its mode is not read";
  }
  ASSERT_EQ(setsockopt(client, IPPROTO_TCP, TCP_CONGESTION, "cubic", 5), 0);
  EXPECT_FALSE(ProbeRttWatch::InProbeRtt(client).has_value());
  close(server);
  close(client);
  close(listener);
}

}  // namespace
}  // namespace genie::net
