#include "genie/driver/doctor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "genie/driver/pair_rounds.h"
#include "genie/launch/local_launcher.h"
#include "genie/loop/precise_sleep.h"
#include "genie/net/interface_address.h"
#include "genie/report/atomic_file.h"
#include "genie/runtime/real_backend.h"
#include "genie/testbed/control.h"

namespace genie::driver {
namespace {

using runtime::Message;
using runtime::RealBackend;

// What a rank sends rank 0 at the end: its label and, per peer, what it measured.
constexpr size_t kLabelBytes = 64;
// The goodput a link gives TCP, as a fraction of its rate (the flow model's default; iperf3
// measures 0.93–0.96 through tbf here, REFERENCE §4).
constexpr double kGoodput = 0.94;

// This network namespace's TCP segments sent and sent again (/proc/net/snmp).
struct TcpSegments {
  double out = 0, retrans = 0;
};
TcpSegments ReadTcpSegments() {
  std::ifstream in("/proc/net/snmp");
  std::string header, values;
  TcpSegments t;
  while (std::getline(in, header)) {
    if (header.rfind("Tcp:", 0) != 0 || !std::getline(in, values)) continue;
    std::istringstream h(header), v(values);
    for (std::string name, value; h >> name && v >> value;) {
      if (name == "OutSegs") t.out = std::stod(value);
      if (name == "RetransSegs") t.retrans = std::stod(value);
    }
    break;
  }
  return t;
}

// Posts operations and runs the loop until all of them completed (or the backend failed).
class Batch {
 public:
  explicit Batch(RealBackend& b) : b_(b) {}
  void Send(int peer, uint64_t tag, Bytes bytes, const void* data = nullptr,
            std::function<void()> then = nullptr) {
    Message m;
    m.peer = peer;
    m.tag = tag;
    m.bytes = bytes;
    m.data = data;
    Post(true, m, std::move(then));
  }
  void Recv(int peer, uint64_t tag, Bytes bytes, void* into = nullptr,
            std::function<void()> then = nullptr) {
    Message m;
    m.peer = peer;
    m.tag = tag;
    m.bytes = bytes;
    m.into = into;
    Post(false, m, std::move(then));
  }
  // False when the backend failed (status() names the peer).
  bool Wait() {
    if (pending_ > 0 && b_.status().ok()) b_.Run();
    return b_.status().ok() && pending_ == 0;
  }

 private:
  void Post(bool send, const Message& m, std::function<void()> then) {
    ++pending_;
    auto done = [this, then = std::move(then)] {
      if (then) then();
      if (--pending_ == 0) b_.Stop();
    };
    if (send) {
      b_.Send(m, std::move(done));
    } else {
      b_.Recv(m, std::move(done));
    }
  }
  RealBackend& b_;
  int pending_ = 0;
};

// Tags: the same sequence on every rank, unique per phase, round and purpose.
uint64_t Tag(int phase, int round, int purpose) {
  return (static_cast<uint64_t>(phase) << 40) | (static_cast<uint64_t>(round) << 20) |
         static_cast<uint64_t>(purpose);
}
enum Phase { kPairwise = 1, kBarrier, kRing, kIncast, kAllToAll, kGather };
constexpr int kRepeats = 2;  // measurements of each direction

// Receive rate of a stream of messages: the bytes over the time from when the receiver was
// ready (or the pattern started) to the last arrival. Arrival times of single messages are
// not used: completions that one read delivers share a loop turn's timestamp.
double RateGbps(TimeNs start, const std::vector<TimeNs>& done, Bytes message) {
  if (done.empty()) return std::nan("");
  const TimeNs last = *std::max_element(done.begin(), done.end());
  return last > start ? static_cast<double>(message * done.size()) / static_cast<double>(last - start)
                      : std::nan("");
}

class Scan {
 public:
  Scan(RealBackend& b, const DoctorOptions& o)
      : b_(b), o_(o), n_(b.world_size()), me_(b.rank()),
        k_(std::max<Bytes>(2, (o.bytes + o.message - 1) / o.message)) {
    const auto n = static_cast<size_t>(n_);
    rx_gbps_.assign(n, std::nan(""));
    rtt_us_.assign(n, std::nan(""));
    retrans_.assign(n, std::nan(""));
  }

  bool Run() {
    auto rounds = PairRounds(n_);
    for (size_t r = 0; r < rounds.size(); ++r) {
      for (auto [a, c] : rounds[r]) {
        if (me_ != a && me_ != c) continue;
        const int round = static_cast<int>(r);
        // Each direction twice and the round trips before and after, keeping the better
        // figures: a fault slows both, a moment of scheduler noise on a busy machine only one.
        if (!Pings(a, c, round, 0)) return false;
        for (int rep = 0; rep < kRepeats; ++rep) {
          if (!Direction(a, c, round, 2 * rep) || !Direction(c, a, round, 2 * rep + 1)) return false;
        }
        if (!Pings(a, c, round, 1)) return false;
      }
    }
    return Patterns();
  }

  // Rank 0: every rank's figures. Other ranks: send theirs.
  bool Gather(report::DoctorScan* scan) {
    std::vector<double> row;
    for (auto* v : {&rx_gbps_, &rtt_us_, &retrans_})
      row.insert(row.end(), v->begin(), v->end());
    row.push_back(ring_gbps_);
    row.push_back(alltoall_gbps_);
    std::string label = o_.host.substr(0, kLabelBytes - 1);
    label.resize(kLabelBytes, '\0');
    const Bytes row_bytes = row.size() * sizeof(double);
    Batch batch(b_);
    if (me_ != 0) {
      batch.Send(0, Tag(kGather, 0, 0), kLabelBytes, label.data());
      batch.Send(0, Tag(kGather, 0, 1), row_bytes, row.data());
      return batch.Wait();
    }
    const auto n = static_cast<size_t>(n_);
    std::vector<std::vector<double>> rows(n, std::vector<double>(row.size()));
    std::vector<std::string> labels(n, std::string(kLabelBytes, '\0'));
    rows[0] = row;
    labels[0] = label;
    for (int p = 1; p < n_; ++p) {
      const auto i = static_cast<size_t>(p);
      batch.Recv(p, Tag(kGather, 0, 0), kLabelBytes, labels[i].data());
      batch.Recv(p, Tag(kGather, 0, 1), row_bytes, rows[i].data());
    }
    if (!batch.Wait()) return false;
    scan->gbps.assign(n, std::vector<double>(n, std::nan("")));
    scan->rtt_us = scan->retrans = scan->gbps;
    for (size_t to = 0; to < n; ++to) {
      scan->hosts.push_back(labels[to].c_str());
      for (size_t from = 0; from < n; ++from) {
        if (from == to) continue;
        scan->gbps[from][to] = rows[to][from];  // measured by the receiver
        scan->retrans[to][from] = rows[to][2 * n + from];  // by the sender
        const double rtt = rows[to][n + from];  // by the lower rank of the pair
        if (!std::isnan(rtt)) scan->rtt_us[to][from] = scan->rtt_us[from][to] = rtt;
      }
      scan->ring_gbps.push_back(rows[to][3 * n]);
      scan->alltoall_gbps.push_back(rows[to][3 * n + 1]);
    }
    // Several ranks on one host (a loopback run): tell them apart.
    auto& h = scan->hosts;
    for (size_t i = 0; i < n; ++i) {
      if (std::count(h.begin(), h.end(), h[i]) > 1 || h[i].empty()) {
        for (size_t j = 0; j < n; ++j) h[j] += "/r" + std::to_string(j);
        break;
      }
    }
    scan->incast_gbps = std::isnan(incast_gbps_) ? 0 : incast_gbps_;
    scan->bytes_per_direction = static_cast<double>(k_ * o_.message);
    return true;
  }

 private:
  // One direction from -> to, alone on the path. The receiver posts its receives and says
  // "ready" (so no byte waits in a socket buffer for it); the sender, once free of its previous
  // pair, sends a zero-byte "start" and then the data on the same connection; the receiver
  // times from the start's arrival to the last byte and says "done", which is when the sender
  // reads its retransmissions.
  bool Direction(int from, int to, int round, int which) {
    Batch batch(b_);
    const uint64_t data = Tag(kPairwise, round, 10 * which), ready = data + 1, done = data + 2,
                   go = data + 3;
    if (me_ == to) {
      std::vector<TimeNs> at;
      TimeNs start = 0;
      batch.Recv(from, go, 0, nullptr, [&] { start = b_.Now(); });
      for (Bytes k = 0; k < k_; ++k) {
        batch.Recv(from, data, o_.message, nullptr, [&] { at.push_back(b_.Now()); });
      }
      batch.Send(from, ready, 0);
      if (!batch.Wait()) return false;
      double& best = rx_gbps_[static_cast<size_t>(from)];
      const double rate = RateGbps(start, at, o_.message);
      if (std::isnan(best) || rate > best) best = rate;
      batch.Send(from, done, 0);
      return batch.Wait();
    }
    TcpSegments before;
    batch.Recv(to, ready, 0, nullptr, [&] {
      before = ReadTcpSegments();
      batch.Send(to, go, 0);
      for (Bytes k = 0; k < k_; ++k) batch.Send(to, data, o_.message);
    });
    batch.Recv(to, done, 0);
    if (!batch.Wait()) return false;
    TcpSegments after = ReadTcpSegments();
    const double out = after.out - before.out;
    double& least = retrans_[static_cast<size_t>(to)];
    const double fraction = out > 0 ? (after.retrans - before.retrans) / out : 0;
    if (std::isnan(least) || fraction < least) least = fraction;
    return true;
  }

  // Small-message round trips started by the lower rank; it keeps the median (the lower of
  // the two times it measures them).
  bool Pings(int a, int c, int round, int rep) {
    const uint64_t ping = Tag(kPairwise, round, 100 + 2 * rep), pong = ping + 1;
    std::vector<double> rtt;
    for (int i = 0; i < o_.pings; ++i) {
      Batch batch(b_);
      if (me_ == a) {
        const TimeNs t0 = b_.Now();
        batch.Send(c, ping, 8);
        batch.Recv(c, pong, 8, nullptr, [&] { rtt.push_back((b_.Now() - t0) / 1e3); });
        if (!batch.Wait()) return false;
      } else {
        batch.Recv(a, ping, 8);
        if (!batch.Wait()) return false;
        batch.Send(a, pong, 8);
        if (!batch.Wait()) return false;
      }
    }
    if (me_ == a) {
      std::sort(rtt.begin(), rtt.end());
      double& best = rtt_us_[static_cast<size_t>(c)];
      best = std::isnan(best) ? rtt[rtt.size() / 2] : std::min(best, rtt[rtt.size() / 2]);
    }
    return true;
  }

  // Everyone reports to rank 0, rank 0 answers everyone: no host starts the next pattern while
  // another still measures the last.
  bool Barrier(int which) {
    Batch batch(b_);
    const uint64_t in = Tag(kBarrier, which, 0), out = in + 1;
    if (me_ == 0) {
      for (int p = 1; p < n_; ++p) batch.Recv(p, in, 0);
      if (!batch.Wait()) return false;
      for (int p = 1; p < n_; ++p) batch.Send(p, out, 0);
    } else {
      batch.Send(0, in, 0);
      batch.Recv(0, out, 0);
    }
    return batch.Wait();
  }

  // Every host sends and receives at once: `count` messages to each of `to`, from each of
  // `from`. Each stream opens with a zero-byte "start"; the rate is this host's bytes received
  // over the time from the first start's arrival to the last byte (NaN when it receives none).
  // The better of the repeats is kept.
  bool Pattern(int phase, int rep, const std::vector<int>& to, const std::vector<int>& from,
               Bytes count, double* rate) {
    Batch batch(b_);
    const uint64_t data = Tag(phase, rep, 0), go = data + 1;
    std::vector<TimeNs> at;
    TimeNs start = 0;
    for (int p : from) {
      batch.Recv(p, go, 0, nullptr, [&] {
        if (start == 0 || b_.Now() < start) start = b_.Now();
      });
      for (Bytes k = 0; k < count; ++k) {
        batch.Recv(p, data, o_.message, nullptr, [&] { at.push_back(b_.Now()); });
      }
    }
    for (int p : to) batch.Send(p, go, 0);
    for (Bytes k = 0; k < count; ++k)
      for (int p : to) batch.Send(p, data, o_.message);
    if (!batch.Wait()) return false;
    const double r = from.empty() ? std::nan("") : RateGbps(start, at, o_.message);
    if (std::isnan(*rate) || r > *rate) *rate = r;
    return true;
  }

  // Ring, incast and all-to-all, each twice (as the pairwise scan), a barrier before each.
  bool Patterns() {
    const int next = (me_ + 1) % n_, prev = (me_ + n_ - 1) % n_;
    std::vector<int> others, none;
    for (int d = 1; d < n_; ++d) others.push_back((me_ + d) % n_);
    // Incast: every other rank sends rank 0 its share of twice one direction's bytes.
    const Bytes incast = std::max<Bytes>(2, (2 * k_ + n_ - 2) / static_cast<Bytes>(n_ - 1));
    const Bytes a2a = std::max<Bytes>(1, (k_ + n_ - 2) / static_cast<Bytes>(n_ - 1));
    const std::vector<int> to_root = me_ == 0 ? none : std::vector<int>{0};
    const std::vector<int> at_root = me_ == 0 ? others : none;
    for (int rep = 0; rep < kRepeats; ++rep) {
      const bool ok = Barrier(3 * rep) && Pattern(kRing, rep, {next}, {prev}, k_, &ring_gbps_) &&
                      Barrier(3 * rep + 1) &&
                      Pattern(kIncast, rep, to_root, at_root, incast, &incast_gbps_) &&
                      Barrier(3 * rep + 2) &&
                      Pattern(kAllToAll, rep, others, others, a2a, &alltoall_gbps_);
      if (!ok) return false;
    }
    return true;
  }

  RealBackend& b_;
  const DoctorOptions& o_;
  const int n_, me_;
  const Bytes k_;  // messages per direction
  std::vector<double> rx_gbps_, rtt_us_, retrans_;  // [peer]
  double ring_gbps_ = std::nan(""), alltoall_gbps_ = std::nan(""), incast_gbps_ = std::nan("");
};

std::string HostLabel(const DoctorOptions& o) {
  if (!o.host.empty()) return o.host;
  if (const char* h = std::getenv("GENIE_HOST"); h && *h) return h;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace

int RunDoctorRank(const DoctorOptions& options, const launch::RankEnv& env) {
  DoctorOptions o = options;
  o.host = HostLabel(o);
  auto fail = [&](const std::string& what, int code) {
    std::cerr << "genie doctor: rank " << env.rank << ": " << what << "\n";
    return code;
  };
  if (env.world_size < 2) {
    return fail("a scan needs at least two hosts: start one rank per host (genie launch "
                "--testbed NAME -n HOSTS -- doctor, mpiexec, srun)", launch::kExitBadInput);
  }
  if (o.message == 0 || o.bytes < o.message) {
    return fail("--bytes must be at least --message-size", launch::kExitBadInput);
  }
  report::DoctorScan scan;
  if (env.rank == 0) {
    if (o.expect_bps > 0) {
      scan.expected_gbps = static_cast<double>(o.expect_bps) * kGoodput / 8e9;
      scan.expected_source = "--expect " + FormatBitRate(o.expect_bps) + " x goodput 0.94";
    } else if (!o.testbed.empty()) {
      auto layout = testbed::Load(o.testbed);
      if (!layout.ok()) return fail(layout.status().message(), launch::kExitBadInput);
      uint64_t rate = 0;
      for (const auto& l : layout->links) {
        if (!l.id.empty() && l.id[0] == 'h' && (rate == 0 || l.rate_bps < rate)) rate = l.rate_bps;
      }
      if (rate > 0) {
        scan.expected_gbps = static_cast<double>(rate) * kGoodput / 8e9;
        scan.expected_source =
            "testbed " + o.testbed + ": host links at " + FormatBitRate(rate) + " x goodput 0.94";
      }
    }
  }
  runtime::RealBackendOptions opt;
  opt.rank = env.rank;
  opt.world_size = env.world_size;
  opt.job_id = env.job_id.empty() ? "genie" : env.job_id;
  opt.rendezvous = env.rendezvous;
  opt.local_rank = env.local_rank;
  opt.local_world_size = env.local_world_size;
  auto bind = net::ResolveBindAddress(o.bind, env.local_rank);
  if (!bind.ok()) return fail("--bind: " + bind.status().message(), launch::kExitBadInput);
  opt.bind_addr = *bind;
  opt.peer_timeout = o.peer_timeout;
  const int local = env.local_world_size > 0 ? env.local_world_size : env.world_size;
  opt.spin = loop::DefaultSleepPolicy(local).spin;
  auto created = RealBackend::Create(opt);
  if (!created.ok()) {
    return fail(created.status().message(),
                created.status().code() == Status::Code::kInvalidArgument ? launch::kExitBadInput
                                                                          : launch::kExitFailed);
  }
  RealBackend& b = **created;
  const TimeNs start = b.Now();
  Scan s(b, o);
  if (!s.Run() || !s.Gather(&scan)) {
    // The scan could not finish: that is itself a finding about the fabric, but not a verdict.
    b.Abort(b.status());
    return fail("the scan could not finish: " + b.status().message(), launch::kExitBadInput);
  }
  scan.seconds = static_cast<double>(b.Now() - start) / 1e9;
  Status st = b.Shutdown();
  if (env.rank != 0) return st.ok() ? 0 : launch::kExitBadInput;
  if (scan.hosts.front().find("/r") != std::string::npos) {
    std::cerr << "genie doctor: several ranks share a host: their figures measure that machine's "
                 "CPUs and loopback, not a fabric; start one rank per host\n";
  }
  auto verdict = report::Diagnose(scan, o.thresholds);
  std::cout << report::FormatDoctorReport(scan, verdict) << std::flush;
  if (!o.json_path.empty()) {
    Status w = report::WriteFileAtomically(o.json_path, report::DoctorJson(scan, verdict).dump(1) + "\n");
    if (!w.ok()) return fail(w.message(), launch::kExitBadInput);
  }
  return verdict.healthy() ? 0 : 1;
}

}  // namespace genie::driver
