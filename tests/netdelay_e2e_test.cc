// `genie netdelay`, the testbed's delay helper, on a real link: two network namespaces joined by
// a veth pair; an iptables NFQUEUE rule on the receiver's PREROUTING sends what arrives there
// to the helper, which runs in that namespace as `genie testbed fault ... delay` will run it.
// Round trips are measured with a small TCP ping-pong from the sender's namespace (one
// direction is delayed, so the round trip grows by the delay). A TCP transfer with the data
// checked runs through the delayed link while the helper is stopped: nothing may be lost.
// Needs root (namespaces, iptables); skips with a message otherwise. TearDown removes the
// namespaces (and with them the rule) and kills the helper, also when a test fails, and then
// checks that nothing is left.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/file.h"
#include "tests/support/process.h"
#include "tests/support/skip.h"
#include "tests/support/temp_dir.h"

namespace genie::testing {
namespace {

using std::chrono::milliseconds;

// Runs `fn` on a thread that entered network namespace `ns`; sockets it makes stay in `ns`
// whichever thread uses them later.
int InNetns(const std::string& ns, const std::function<int()>& fn) {
  int out = -1;
  std::thread t([&] {
    const int nsfd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (nsfd < 0) return;
    const bool entered = setns(nsfd, CLONE_NEWNET) == 0;
    close(nsfd);
    if (entered) out = fn();
  });
  t.join();
  return out;
}

sockaddr_in Address(const std::string& ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Reads and writes give up after 10 s, so a broken link fails the test instead of hanging it.
void SetTimeouts(int fd) {
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

bool ReadAll(int fd, char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t r = write(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

// The byte at offset k of the transfer: a pattern that catches lost, repeated or moved data.
char PatternByte(uint64_t k) { return static_cast<char>((k * 131) ^ (k >> 12)); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

std::string Join(const std::vector<double>& v) {
  std::ostringstream s;
  for (double x : v) s << x << ' ';
  return s.str();
}

// Namespaces ndA<pid> (10.214.0.1) and ndB<pid> (10.214.0.2), veth vdA<pid> <-> vdB<pid>;
// packets arriving at vdB<pid> go to NFQUEUE queue_ (unique per test process).
class NetDelay : public ::testing::Test {
 protected:
  void SetUp() override {
    GENIE_SKIP_IF(RootMissing("create network namespaces and iptables rules"));
    GENIE_SKIP_IF(ToolMissing("iptables", "iptables"));
    RemoveLeftoversOfKilledRuns();
    const std::string id = std::to_string(getpid());
    ns_a_ = "ndA" + id;
    ns_b_ = "ndB" + id;
    veth_a_ = "vdA" + id;
    veth_b_ = "vdB" + id;
    queue_ = 1000 + getpid() % 60000;
    CliResult r =
        RunCli("ip netns add " + ns_a_ + " && ip netns add " + ns_b_ + " && ip link add " +
               veth_a_ + " type veth peer name " + veth_b_ + " && ip link set " + veth_a_ +
               " netns " + ns_a_ + " && ip link set " + veth_b_ + " netns " + ns_b_ + " && ip -n " +
               ns_a_ + " addr add " + kAddrA + "/24 dev " + veth_a_ + " && ip -n " + ns_b_ +
               " addr add " + kAddrB + "/24 dev " + veth_b_ + " && ip -n " + ns_a_ + " link set " +
               veth_a_ + " up && ip -n " + ns_b_ + " link set " + veth_b_ + " up && ip -n " +
               ns_a_ + " link set lo up && ip -n " + ns_b_ + " link set lo up");
    if (r.exit_code != 0) {
      TearDown();
      GTEST_SKIP() << "cannot create network namespaces here: " << r.output;
    }
    dir_ = FreshDir("netdelay");
    StartEchoServer();
  }

  void TearDown() override {
    if (helper_.pid > 0) {  // a failed test must not leave the helper running
      Signal(helper_, SIGKILL);
      WaitExit(helper_, 5);
    }
    for (int fd : fds_) shutdown(fd, SHUT_RDWR);  // wakes the servers' accept and read
    for (auto& t : threads_) t.join();
    for (int fd : fds_) close(fd);
    fds_.clear();
    threads_.clear();
    if (ns_a_.empty()) return;
    RunCli("ip netns del " + ns_a_ + " 2>/dev/null; ip netns del " + ns_b_ + " 2>/dev/null");
    // Nothing is left: namespaces (the rule lived in one), links, the helper.
    const std::string netns = RunCli("ip netns list 2>/dev/null").output;
    EXPECT_EQ(netns.find(ns_a_), std::string::npos) << netns;
    EXPECT_EQ(netns.find(ns_b_), std::string::npos) << netns;
    EXPECT_NE(RunCli("ip link show " + veth_a_ + " 2>&1").exit_code, 0);
    EXPECT_EQ(HelpersRunning(), 0)
        << "a `genie netdelay --queue " << queue_ << "` is still running";
  }

  // A run killed before its TearDown leaves ndA<pid>/ndB<pid> and maybe a helper in ndB<pid>:
  // removed here when process <pid> is gone.
  static void RemoveLeftoversOfKilledRuns() {
    std::istringstream list(RunCli("ip netns list 2>/dev/null").output);
    for (std::string name; list >> name;) {
      if (name.size() < 4 || (name.rfind("ndA", 0) != 0 && name.rfind("ndB", 0) != 0)) continue;
      const std::string pid = name.substr(3);
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (access(("/proc/" + pid).c_str(), F_OK) == 0) continue;  // still running
      RunCli("ip netns pids " + name + " | xargs -r kill -9; ip netns del " + name);
    }
  }

  // Processes whose command line runs `netdelay --queue queue_` (from /proc).
  int HelpersRunning() const {
    int n = 0;
    DIR* d = opendir("/proc");
    if (d == nullptr) return -1;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::string cmd = ReadFile(std::string("/proc/") + e->d_name + "/cmdline");
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      if (cmd.find("netdelay --queue " + std::to_string(queue_) + " ") != std::string::npos) ++n;
    }
    closedir(d);
    return n;
  }

  // A listening socket in B; `serve` runs on its own thread for the first connection.
  void Serve(int port, std::function<void(int)> serve) {
    const int lfd = InNetns(ns_b_, [&] {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      const int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sockaddr_in a = Address(kAddrB, port);
      if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || listen(fd, 4) != 0) {
        close(fd);
        return -1;
      }
      return fd;
    });
    ASSERT_GE(lfd, 0) << "cannot listen on " << kAddrB << ":" << port << " in " << ns_b_;
    fds_.push_back(lfd);
    threads_.emplace_back([lfd, serve] {
      const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      SetTimeouts(c);
      serve(c);
      close(c);
    });
  }

  // A connected socket from A to B:port.
  int Connect(int port) {
    const int fd = InNetns(ns_a_, [&] {
      const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      SetTimeouts(s);
      sockaddr_in a = Address(kAddrB, port);
      if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        close(s);
        return -1;
      }
      return s;
    });
    if (fd >= 0) fds_.push_back(fd);
    return fd;
  }

  void StartEchoServer() {
    Serve(kEchoPort, [](int c) {
      char buf[64];
      while (ReadAll(c, buf, sizeof(buf)) && WriteAll(c, buf, sizeof(buf))) {
      }
    });
    echo_ = Connect(kEchoPort);
    ASSERT_GE(echo_, 0) << "cannot connect from " << ns_a_ << " to " << kAddrB;
  }

  // `n` round trips of 64 bytes on the echo connection, `gap` apart; each in ms.
  std::vector<double> RoundTrips(int n, milliseconds gap = milliseconds(2)) {
    std::vector<double> rtt;
    char buf[64] = {};
    for (int i = 0; i < n; ++i) {
      const double t0 = NowSeconds();
      if (!WriteAll(echo_, buf, sizeof(buf)) || !ReadAll(echo_, buf, sizeof(buf))) {
        ADD_FAILURE() << "the echo connection broke after " << i << " round trips";
        break;
      }
      rtt.push_back((NowSeconds() - t0) * 1e3);
      std::this_thread::sleep_for(gap);
    }
    return rtt;
  }

  // False when iptables has no NFQUEUE target here (the test then skips).
  bool AddRule() {
    CliResult r =
        RunCli("ip netns exec " + ns_b_ + " iptables -t mangle -A PREROUTING -i " + veth_b_ +
               " -j NFQUEUE --queue-num " + std::to_string(queue_) + " --queue-bypass 2>&1");
    rule_error_ = r.output;
    return r.exit_code == 0;
  }
  std::string Rules() {
    return RunCli("ip netns exec " + ns_b_ + " iptables -t mangle -S PREROUTING").output;
  }

  // Starts the helper in B and waits until it says its queue is bound.
  void StartHelper(const std::string& flags) {
    // A fresh log each time: "bound" in the last helper's log must not count.
    helper_log_ = dir_ + "/netdelay-" + std::to_string(++helpers_started_) + ".log";
    helper_ = Spawn("exec ip netns exec " + ns_b_ + " " + GenieBinary() + " netdelay --queue " +
                        std::to_string(queue_) + " " + flags,
                    helper_log_);
    for (double end = NowSeconds() + 10; NowSeconds() < end;) {
      if (ReadLog(helper_).find("bound") != std::string::npos) return;
      if (WaitExit(helper_, 0)) break;
      std::this_thread::sleep_for(milliseconds(20));
    }
    FAIL() << "genie netdelay did not bind its queue:\n" << ReadLog(helper_);
  }
  // SIGTERM; the helper must exit 0 within 5 s.
  void StopHelper() {
    Signal(helper_, SIGTERM);
    const auto code = WaitExit(helper_, 5);
    ASSERT_TRUE(code.has_value()) << "genie netdelay still runs 5 s after SIGTERM";
    EXPECT_EQ(*code, 0) << ReadLog(helper_);
    helper_.pid = -1;
    EXPECT_EQ(HelpersRunning(), 0);
  }

  // A's TCP counter `name` (e.g. TcpRetransSegs, TcpExtTCPDSACKRecvSegs) from nstat, which
  // reads /proc/net/snmp and netstat in A's namespace (-s: no history file is written).
  long TcpCounter(const std::string& name) {
    std::istringstream in(RunCli("ip netns exec " + ns_a_ + " nstat -asz " + name).output);
    for (std::string line; std::getline(in, line);) {  // "#kernel", then "Name value rate"
      std::istringstream fields(line);
      std::string key;
      long value = 0;
      if (fields >> key >> value && key == name) return value;
    }
    ADD_FAILURE() << "nstat in " << ns_a_ << " has no " << name;
    return -1;
  }

  static constexpr const char* kAddrA = "10.214.0.1";
  static constexpr const char* kAddrB = "10.214.0.2";
  static constexpr int kEchoPort = 7001;
  static constexpr int kDataPort = 7002;
  std::string ns_a_, ns_b_, veth_a_, veth_b_, dir_, rule_error_;
  std::string helper_log_;
  int helpers_started_ = 0;
  int queue_ = 0;
  int echo_ = -1;
  Child helper_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
};

TEST_F(NetDelay, AddsTheDelayToOneDirectionAndTakesItAwayWhenStopped) {
  const std::vector<double> base = RoundTrips(50);
  if (!AddRule()) GTEST_SKIP() << "iptables has no NFQUEUE target here: " << rule_error_;
  // The rule alone (no helper bound): --queue-bypass lets everything through undelayed.
  const std::vector<double> bypass = RoundTrips(20);
  EXPECT_LT(Median(bypass), Median(base) + 2) << Join(bypass);

  ASSERT_NO_FATAL_FAILURE(StartHelper("--delay 20ms"));
  const std::vector<double> delayed = RoundTrips(30);
  const double added = Median(delayed) - Median(base);
  // Never less than the delay; more only by the helper's scheduling (a few ms on two busy
  // cores) — twice the delay would be a packet held twice.
  EXPECT_GT(added, 19.0) << "base " << Join(base) << "\ndelayed " << Join(delayed);
  EXPECT_LT(added, 30.0) << "base " << Join(base) << "\ndelayed " << Join(delayed);
  EXPECT_GE(Quantile(delayed, 0.0), 20.0) << "no round trip may be shorter than the delay";
  ASSERT_NO_FATAL_FAILURE(StopHelper());
  const std::string log = ReadFile(helper_log_);
  EXPECT_NE(log.find("packets"), std::string::npos) << log;

  const std::vector<double> after = RoundTrips(30);
  EXPECT_LT(Median(after), Median(base) + 2) << Join(after);
  ASSERT_EQ(RunCli("ip netns exec " + ns_b_ + " iptables -t mangle -D PREROUTING -i " + veth_b_ +
                   " -j NFQUEUE --queue-num " + std::to_string(queue_) + " --queue-bypass")
                .exit_code,
            0);
  EXPECT_EQ(Rules().find("NFQUEUE"), std::string::npos) << Rules();
  std::printf("round trip median: base %.3f ms, delayed %.3f ms (+%.3f), after %.3f ms\n",
              Median(base), Median(delayed), added, Median(after));
}

TEST_F(NetDelay, JitterSpreadsTheRoundTripsAroundTheDelay) {
  if (!AddRule()) GTEST_SKIP() << "iptables has no NFQUEUE target here: " << rule_error_;
  ASSERT_NO_FATAL_FAILURE(StartHelper("--delay 20ms"));
  const std::vector<double> steady = RoundTrips(30);
  ASSERT_NO_FATAL_FAILURE(StopHelper());
  ASSERT_NO_FATAL_FAILURE(StartHelper("--delay 20ms --jitter 5ms --seed 3"));
  // 200 round trips: the sample quartiles of a uniform ±5 ms then sit within ~0.3 ms of
  // ±2.5 ms (with 60 the spread fell below 3.5 ms about once in thirty runs).
  const std::vector<double> jittery = RoundTrips(200);
  ASSERT_NO_FATAL_FAILURE(StopHelper());
  // Quartiles, not extremes: this machine's scheduling adds rare outliers of tens of ms.
  const double steady_spread = Quantile(steady, 0.75) - Quantile(steady, 0.25);
  const double jitter_spread = Quantile(jittery, 0.75) - Quantile(jittery, 0.25);
  // Uniform over ±5 ms: the quartiles are 5 ms apart; 3 ms is six standard errors below.
  EXPECT_GT(jitter_spread, 3.0) << Join(jittery);
  // The jitter is the helper's, not the machine's: load only ever adds delay (the steady run's
  // spread grew to 6–8 ms on two loaded cores, and loaded runs shift every round trip up by
  // ~1 ms), so only jitter puts round trips below the delay — about 40 % of them with ±5 ms;
  // ask for a tenth by half a ms.
  EXPECT_GE(Quantile(steady, 0.0), 19.9) << "steady " << Join(steady);
  EXPECT_LT(Quantile(jittery, 0.10), 19.5)
      << "steady " << Join(steady) << "\njittery " << Join(jittery);
  EXPECT_GE(Quantile(jittery, 0.0), 15.0) << Join(jittery);
  EXPECT_GT(Median(jittery), 17.0) << Join(jittery);
  EXPECT_LT(Median(jittery), 30.0) << Join(jittery);  // late only by scheduling, as above
  std::printf("round trip p25-p75: without jitter %.3f ms, with ±5 ms %.3f ms\n", steady_spread,
              jitter_spread);
}

TEST_F(NetDelay, StoppingTheHelperMidTransferLosesNothing) {
  if (!AddRule()) GTEST_SKIP() << "iptables has no NFQUEUE target here: " << rule_error_;
  ASSERT_NO_FATAL_FAILURE(StartHelper("--delay 20ms"));
  // 16 MiB paced over ~1.5 s; the helper is stopped half way, with ~20 ms of data held.
  constexpr size_t kChunk = 64 << 10, kChunks = 256;
  // Shared with the server thread, which TearDown joins after this body has returned.
  struct Received {
    std::atomic<uint64_t> bytes{0};
    std::atomic<bool> intact{true};
  };
  auto got = std::make_shared<Received>();
  Serve(kDataPort, [got](int c) {
    std::vector<char> buf(kChunk);
    uint64_t at = 0;
    while (true) {
      const ssize_t r = read(c, buf.data(), buf.size());
      if (r <= 0) break;
      for (ssize_t i = 0; i < r; ++i) {
        if (buf[static_cast<size_t>(i)] != PatternByte(at + static_cast<uint64_t>(i))) {
          got->intact = false;
        }
      }
      at += static_cast<uint64_t>(r);
      got->bytes = at;
    }
  });
  const long retrans0 = TcpCounter("TcpRetransSegs");
  const long dsack0 = TcpCounter("TcpExtTCPDSACKRecvSegs");
  const int data = Connect(kDataPort);
  ASSERT_GE(data, 0);
  std::atomic<bool> sent_all{true};
  std::thread sender([&] {
    std::vector<char> buf(kChunk);
    for (size_t n = 0; n < kChunks; ++n) {
      for (size_t i = 0; i < kChunk; ++i) buf[i] = PatternByte(n * kChunk + i);
      if (!WriteAll(data, buf.data(), buf.size())) {
        sent_all = false;
        return;
      }
      std::this_thread::sleep_for(milliseconds(6));
    }
    shutdown(data, SHUT_WR);
  });
  std::this_thread::sleep_for(milliseconds(700));
  const std::string queue_stats =
      RunCli("ip netns exec " + ns_b_ + " cat /proc/net/netfilter/nfnetlink_queue").output;
  const uint64_t before_stop = got->bytes;
  StopHelper();  // no early return: the sender thread must be joined
  sender.join();
  for (double end = NowSeconds() + 10; NowSeconds() < end && got->bytes < kChunk * kChunks;) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(sent_all);
  EXPECT_GT(before_stop, 0u) << "no data went through the delayed link before the stop";
  EXPECT_LT(before_stop, kChunk * kChunks) << "the transfer ended before the helper was stopped";
  EXPECT_EQ(got->bytes.load(), kChunk * kChunks);
  EXPECT_TRUE(got->intact) << "the data arrived corrupted";
  // The kernel's queue dropped nothing (columns: queue, portid, held, copy mode, copy range,
  // queue_dropped, user_dropped, id, 1).
  std::istringstream fields(queue_stats);
  std::vector<std::string> q{std::istream_iterator<std::string>(fields), {}};
  ASSERT_GE(q.size(), 7u) << queue_stats;
  EXPECT_EQ(q[5], "0") << "queue_dropped: " << queue_stats;
  EXPECT_EQ(q[6], "0") << "user_dropped: " << queue_stats;
  // Lost means retransmitted for real. On a busy machine TCP may also send a tail-loss probe
  // early (its timer follows the round trip, which drops from 20 ms to µs at the stop); the
  // receiver then reports the probe as a duplicate (D-SACK): the original was not lost.
  std::this_thread::sleep_for(milliseconds(200));  // the last D-SACK comes back
  const long retrans = TcpCounter("TcpRetransSegs") - retrans0;
  const long duplicates = TcpCounter("TcpExtTCPDSACKRecvSegs") - dsack0;
  EXPECT_LE(retrans, duplicates) << "TCP retransmitted " << retrans << " segments, of which "
                                 << duplicates << " had arrived:\n"
                                 << ReadFile(helper_log_)
                                 << RunCli("ip netns exec " + ns_a_ +
                                           " nstat -asz | grep -Ei "
                                           "'retrans|loss|timeout|reord|spurious|sack'")
                                        .output;
  std::printf("retransmitted %ld segments, %ld of them spurious\n", retrans, duplicates);
  std::printf("%s", ReadFile(helper_log_).c_str());
}

}  // namespace
}  // namespace genie::testing
