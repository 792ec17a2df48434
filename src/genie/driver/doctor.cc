#include "genie/driver/doctor.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "genie/driver/pair_paths.h"
#include "genie/driver/pair_probe.h"
#include "genie/driver/pair_rounds.h"
#include "genie/driver/rank_backend.h"
#include "genie/driver/ring_steps.h"
#include "genie/launch/local_launcher.h"
#include "genie/loop/precise_sleep.h"
#include "genie/real_backend/real_backend.h"
#include "genie/record/cpu_pressure.h"
#include "genie/record/output_guard.h"
#include "genie/report/atomic_file.h"
#include "genie/report/html/html_page.h"
#include "genie/report/html/page_model.h"
#include "genie/testbed/control.h"

namespace genie::driver {
namespace {

using runtime::Message;
using real_backend::RealBackend;

// What a rank sends rank 0 at the end: its label and, per peer, what it measured.
constexpr size_t kLabelBytes = 64;

// Tags: the same sequence on every rank, unique per phase, round and purpose.
uint64_t DoctorTag(int phase, int round, int purpose) {
  return (static_cast<uint64_t>(phase) << 40) | (static_cast<uint64_t>(round) << 20) |
         static_cast<uint64_t>(purpose);
}
enum Phase {
  kPairwise = 1, kBarrier, kRing, kIncast, kAllToAll, kGather, kConfirm, kSteps, kPaths,
  kIncastSend
};
// At most this many slow directions are measured again alone (more: the fault is broad).
constexpr int kMaxConfirm = 64;
constexpr int kDirectionRepeats = 2;  // measurements of each direction
// What each pair across leaves sends each way while its path is learnt: past a slow link's
// shaper bucket, so that link end keeps a queue while it lasts.
constexpr Bytes kPathBytes = 1 << 20;

class Scan {
 public:
  // `layout`: rank 0's testbed, whose switch counters say which links each pair's traffic
  // crossed (Paths; nullptr: not on a testbed).
  // `ring_group`: the ring steps run in rings of this many consecutive ranks (a leaf's hosts,
  // so no step waits on a slower spine); 0 or n: one ring of all.
  // `shaper`: the links' token buckets, when known (a testbed).
  Scan(RealBackend& b, const DoctorOptions& o, const testbed::Layout* layout, int ring_group,
       Shaper shaper)
      : b_(b),
        o_(o),
        layout_(layout),
        n_(b.world_size()),
        me_(b.rank()),
        k_(std::max<Bytes>(2, (o.bytes + o.message - 1) / o.message)),
        steps_(
            b, ring_group, shaper, [](int round) { return DoctorTag(kSteps, round, 0); },
            DoctorTag(kGather, 2, 0), [this](int which) { return Barrier(1000 + which); }) {
    const auto n = static_cast<size_t>(n_);
    rx_gbps_.assign(n, std::nan(""));
    rtt_us_.assign(n, std::nan(""));
    retrans_.assign(n, std::nan(""));
    alone_gbps_.assign(n, std::nan(""));
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
        for (int rep = 0; rep < kDirectionRepeats; ++rep) {
          if (!Direction(a, c, round, 2 * rep) || !Direction(c, a, round, 2 * rep + 1)) return false;
        }
        if (!Pings(a, c, round, 1)) return false;
      }
    }
    return Confirm() && Patterns();
  }

  // Every rank: whether rank 0 (`go`, its decision from the gathered scan) wants the ring
  // steps, then they and their gather. Skipped, the JSON has no `ring_steps`.
  bool Steps(bool go) {
    Batch batch(b_);
    uint8_t flag = go ? 1 : 0;
    if (me_ == 0) {
      for (int p = 1; p < n_; ++p) batch.Send(p, DoctorTag(kGather, 1, 0), 1, &flag);
    } else {
      batch.Recv(0, DoctorTag(kGather, 1, 0), 1, &flag);
    }
    if (!batch.Wait()) return false;
    if (flag == 0) return true;
    steps_measured_ = true;
    return steps_.Measure() && steps_.Gather();
  }
  bool steps_measured() const { return steps_measured_; }

  // On a leaf-spine testbed, after Gather: every pair across leaves, one at a time, sends
  // kPathBytes each way at once while rank 0 reads the switches' counters around it
  // (pair_paths.h): the switch links each direction crossed go into scan->paths, whatever the
  // ECMP hashing chose. Rank 0 says which pairs (none: not on a leaf-spine testbed).
  bool Paths(report::DoctorScan* scan) {
    std::optional<PairPaths> learner;
    std::vector<int32_t> list(static_cast<size_t>(1 + n_ * (n_ - 1)), 0);  // count, then pairs
    Batch batch(b_);
    if (me_ == 0) {
      learner.emplace(layout_, scan->hosts);
      for (auto& round : PairRounds(n_)) {
        for (auto [a, c] : round) {
          if (!learner->Crosses(a, c)) {
            learner->WithinLeaf(a, c);
            continue;
          }
          list[static_cast<size_t>(1 + 2 * list[0])] = a;
          list[static_cast<size_t>(2 + 2 * list[0])] = c;
          ++list[0];
        }
      }
      for (int p = 1; p < n_; ++p) {
        batch.Send(p, DoctorTag(kPaths, 0, 0), list.size() * sizeof(int32_t), list.data());
      }
    } else {
      batch.Recv(0, DoctorTag(kPaths, 0, 0), list.size() * sizeof(int32_t), list.data());
    }
    if (!batch.Wait()) return false;
    if (list[0] == 0) return true;
    if (!Barrier(1999, [&] { learner->Read(); })) return false;
    for (int i = 0; i < list[0]; ++i) {
      const int a = list[static_cast<size_t>(1 + 2 * i)], c = list[static_cast<size_t>(2 + 2 * i)];
      if (me_ == a || me_ == c) {
        const int peer = me_ == a ? c : a;
        const uint64_t tag = DoctorTag(kPaths, 1 + i, 0);
        for (Bytes k = 0; k < kPathBytes / o_.message + 1; ++k) {
          batch.Recv(peer, tag, o_.message);
          batch.Send(peer, tag, o_.message);
        }
        if (!batch.Wait()) return false;
      }
      if (!Barrier(2000 + i, [&] {
            learner->Read();
            learner->Attribute(a, c);
          })) {
        return false;
      }
    }
    if (me_ == 0) scan->paths = learner->paths();
    return true;
  }

  // Rank 0, after Steps: the ring steps' figures and their fit (JSON "ring_steps").
  nlohmann::json RingStepsJson() const { return steps_.ToJson(); }

  // Rank 0: every rank's figures. Other ranks: send theirs.
  bool Gather(report::DoctorScan* scan) {
    std::vector<double> row;
    for (auto* v : {&rx_gbps_, &rtt_us_, &retrans_, &alone_gbps_})
      row.insert(row.end(), v->begin(), v->end());
    row.push_back(ring_gbps_);
    row.push_back(alltoall_gbps_);
    row.push_back(incast_send_gbps_);
    std::string label = o_.host.substr(0, kLabelBytes - 1);
    label.resize(kLabelBytes, '\0');
    const Bytes row_bytes = row.size() * sizeof(double);
    Batch batch(b_);
    if (me_ != 0) {
      batch.Send(0, DoctorTag(kGather, 0, 0), kLabelBytes, label.data());
      batch.Send(0, DoctorTag(kGather, 0, 1), row_bytes, row.data());
      return batch.Wait();
    }
    const auto n = static_cast<size_t>(n_);
    std::vector<std::vector<double>> rows(n, std::vector<double>(row.size()));
    std::vector<std::string> labels(n, std::string(kLabelBytes, '\0'));
    rows[0] = row;
    labels[0] = label;
    for (int p = 1; p < n_; ++p) {
      const auto i = static_cast<size_t>(p);
      batch.Recv(p, DoctorTag(kGather, 0, 0), kLabelBytes, labels[i].data());
      batch.Recv(p, DoctorTag(kGather, 0, 1), row_bytes, rows[i].data());
    }
    if (!batch.Wait()) return false;
    scan->gbps.assign(n, std::vector<double>(n, std::nan("")));
    scan->rtt_us = scan->retrans = scan->gbps;
    for (size_t to = 0; to < n; ++to) {
      scan->hosts.push_back(labels[to].c_str());
      for (size_t from = 0; from < n; ++from) {
        if (from == to) continue;
        // Measured by the receiver; a direction measured again alone keeps that figure.
        const double alone = rows[to][3 * n + from];
        scan->gbps[from][to] = std::isnan(alone) ? rows[to][from] : alone;
        if (!std::isnan(alone)) {
          ++scan->remeasured;
          scan->contended += alone > rows[to][from] / o_.thresholds.slow;
        }
        scan->retrans[to][from] = rows[to][2 * n + from];  // by the sender
        const double rtt = rows[to][n + from];  // by the lower rank of the pair
        if (!std::isnan(rtt)) scan->rtt_us[to][from] = scan->rtt_us[from][to] = rtt;
      }
      scan->ring_gbps.push_back(rows[to][4 * n]);
      scan->alltoall_gbps.push_back(rows[to][4 * n + 1]);
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
    if (n > 2 && !std::isnan(rows[1][4 * n + 2])) scan->incast_send_gbps = rows[1][4 * n + 2];
    scan->bytes_per_direction = static_cast<double>(k_ * o_.message);
    return true;
  }

 private:
  // One direction from -> to, alone on the path (pair_probe.h says how it is timed).
  bool Direction(int from, int to, int round, int which) {
    DirectionFigures f;
    if (!MeasureDirection(b_, from, to, DoctorTag(kPairwise, round, 10 * which), o_.message, k_, &f)) {
      return false;
    }
    if (me_ == to) {
      double& best = (alone_ ? alone_gbps_ : rx_gbps_)[static_cast<size_t>(from)];
      if (alone_ || std::isnan(best) || f.gbps > best) best = f.gbps;
      return true;
    }
    if (alone_) return true;  // retransmissions are judged on the pairwise figures
    // The lower of the two measurements: random loss shows in each, a healthy link's single
    // burst in one only (0.7 % of a 4 MiB transfer on two pairs of a healthy testbed, once,
    // on a loaded 2-core machine).
    const double frac = f.sender_delta.out > 0 ? f.sender_delta.Resent() / f.sender_delta.out : 0;
    double& kept = retrans_[static_cast<size_t>(to)];
    kept = std::isnan(kept) ? frac : std::min(kept, frac);
    return true;
  }

  // Small-message round trips started by the lower rank; it keeps the median (the lower of
  // the two times it measures them).
  bool Pings(int a, int c, int round, int rep) {
    double median = std::nan("");
    if (!MeasurePings(b_, a, c, DoctorTag(kPairwise, round, 100 + 2 * rep), o_.pings, &median)) {
      return false;
    }
    if (me_ == a && !std::isnan(median)) {
      double& best = rtt_us_[static_cast<size_t>(c)];
      best = std::isnan(best) ? median : std::min(best, median);
    }
    return true;
  }

  // Everyone reports to rank 0, rank 0 answers everyone: no host starts the next pattern while
  // another still measures the last.
  // `quiet` runs on rank 0 while every rank waits in the barrier (nothing of the scan moves).
  bool Barrier(int which, const std::function<void()>& quiet = nullptr) {
    Batch batch(b_);
    const uint64_t in = DoctorTag(kBarrier, which, 0), out = in + 1;
    if (me_ == 0) {
      for (int p = 1; p < n_; ++p) batch.Recv(p, in, 0);
      if (!batch.Wait()) return false;
      if (quiet) quiet();
      for (int p = 1; p < n_; ++p) batch.Send(p, out, 0);
    } else {
      batch.Send(0, in, 0);
      batch.Recv(0, out, 0);
    }
    return batch.Wait();
  }

  // Pairs measured in the same round can share a path that one of them alone would not fill
  // (two flows hashed onto one uplink, a queue another pair filled): every direction slower
  // than the pairwise median's `slow` fraction, and every round trip slower than `latency`
  // times the median, is measured again with the whole fabric idle, one at a time, and the
  // alone figure replaces it. (Which switch links a transfer crossed is learnt after, by Paths.)
  bool Confirm() {
    Batch batch(b_);
    const auto n = static_cast<size_t>(n_);
    // list[0] slow transfers and list[1] slow round trips, then their (from, to) pairs.
    std::vector<int32_t> list(2 + 4 * kMaxConfirm, 0);
    std::vector<double> mine(rx_gbps_);
    mine.insert(mine.end(), rtt_us_.begin(), rtt_us_.end());
    if (me_ != 0) {
      batch.Send(0, DoctorTag(kConfirm, 0, 0), mine.size() * sizeof(double), mine.data());
      batch.Recv(0, DoctorTag(kConfirm, 0, 1), list.size() * sizeof(int32_t), list.data());
      if (!batch.Wait()) return false;
    } else {
      std::vector<std::vector<double>> rows(n, std::vector<double>(2 * n));
      rows[0] = mine;
      for (int p = 1; p < n_; ++p) {
        batch.Recv(p, DoctorTag(kConfirm, 0, 0), 2 * n * sizeof(double),
                   rows[static_cast<size_t>(p)].data());
      }
      if (!batch.Wait()) return false;
      auto median = [&](size_t offset) {
        std::vector<double> all;
        for (size_t to = 0; to < n; ++to)
          for (size_t from = 0; from < n; ++from)
            if (from != to && !std::isnan(rows[to][offset + from])) all.push_back(rows[to][offset + from]);
        std::sort(all.begin(), all.end());
        return all.empty() ? 0.0 : all[all.size() / 2];
      };
      // Transfers are judged (report::Diagnose) against the others' median after this pass
      // replaced the contended figures with alone ones, which is higher than the pairwise
      // median when many pairs shared a path (leaf-spine): every transfer below `slow` x the
      // fastest is measured again, not only those below `slow` x the pairwise median, or one
      // slowed by its round's load alone stays slow in the verdict (seen in CI: ten such
      // pairs named beside a slow spine link).
      double fastest = 0;
      for (size_t to = 0; to < n; ++to)
        for (size_t from = 0; from < n; ++from)
          if (from != to && !std::isnan(rows[to][from])) fastest = std::max(fastest, rows[to][from]);
      const double rtt = median(n);
      const auto& t = o_.thresholds;
      int transfers = 0, trips = 0;
      for (size_t from = 0; from < n; ++from) {
        for (size_t to = 0; to < n; ++to) {
          if (from == to) continue;
          if (transfers < kMaxConfirm && rows[to][from] < t.slow * fastest) {
            list[static_cast<size_t>(2 + 2 * transfers)] = static_cast<int32_t>(from);
            list[static_cast<size_t>(3 + 2 * transfers)] = static_cast<int32_t>(to);
            ++transfers;
          }
          // Round trips are measured by the lower rank of the pair.
          const double r = rows[to][n + from];
          if (to < from && trips < kMaxConfirm && r > t.latency * rtt &&
              r > rtt + t.latency_floor_us) {
            list[static_cast<size_t>(2 + 2 * kMaxConfirm + 2 * trips)] = static_cast<int32_t>(to);
            list[static_cast<size_t>(3 + 2 * kMaxConfirm + 2 * trips)] = static_cast<int32_t>(from);
            ++trips;
          }
        }
      }
      list[0] = transfers;
      list[1] = trips;
      for (int p = 1; p < n_; ++p) {
        batch.Send(p, DoctorTag(kConfirm, 0, 1), list.size() * sizeof(int32_t), list.data());
      }
      if (!batch.Wait()) return false;
    }
    alone_ = true;
    for (int i = 0; i <= list[0]; ++i) {
      if (!Barrier(100 + i)) return false;
      if (i == list[0]) break;
      const int from = list[static_cast<size_t>(2 + 2 * i)], to = list[static_cast<size_t>(3 + 2 * i)];
      if ((me_ == from || me_ == to) && !Direction(from, to, 10000 + i, 0)) return false;
    }
    alone_ = false;
    // Round trips taken while other pairs filled a shared queue: again, alone (the lower
    // median is kept).
    for (int i = 0; i < list[1]; ++i) {
      const auto at = static_cast<size_t>(2 + 2 * kMaxConfirm + 2 * i);
      const int a = list[at], c = list[at + 1];
      if (!Barrier(100 + 2 * kMaxConfirm + i)) return false;
      if ((me_ == a || me_ == c) && !Pings(a, c, 20000 + i, 0)) return false;
    }
    return list[1] == 0 || Barrier(100 + 3 * kMaxConfirm);
  }

  // Every host sends and receives at once: `count` messages to each of `to`, from each of
  // `from`. Each stream opens with a zero-byte "start"; the rate is this host's bytes received
  // over the time from the first start's arrival to the last byte (NaN when it receives none).
  // The better of the repeats is kept.
  bool Pattern(int phase, int rep, const std::vector<int>& to, const std::vector<int>& from,
               Bytes count, double* rate) {
    return Pattern(phase, rep, to, count, from, count, rate);
  }
  // The same with `sends` messages to each of `to` and `receives` from each of `from`.
  bool Pattern(int phase, int rep, const std::vector<int>& to, Bytes sends,
               const std::vector<int>& from, Bytes receives, double* rate) {
    Batch batch(b_);
    const uint64_t data = DoctorTag(phase, rep, 0), go = data + 1;
    std::vector<TimeNs> at;
    TimeNs start = 0;
    for (int p : from) {
      batch.Recv(p, go, 0, nullptr, [&] {
        if (start == 0 || b_.Now() < start) start = b_.Now();
      });
      for (Bytes k = 0; k < receives; ++k) {
        batch.Recv(p, data, o_.message, nullptr, [&] { at.push_back(b_.Now()); });
      }
    }
    for (int p : to) batch.Send(p, go, 0);
    for (Bytes k = 0; k < sends; ++k)
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
    for (int rep = 0; rep < kDirectionRepeats; ++rep) {
      const bool ok = Barrier(3 * rep) && Pattern(kRing, rep, {next}, {prev}, k_, &ring_gbps_) &&
                      Barrier(3 * rep + 1) &&
                      Pattern(kIncast, rep, to_root, at_root, incast, &incast_gbps_) &&
                      Barrier(3 * rep + 2) &&
                      Pattern(kAllToAll, rep, others, others, a2a, &alltoall_gbps_);
      if (!ok) return false;
    }
    return n_ < 3 || IncastSend();
  }

  // Rank 0 sends rank 1 one direction's bytes while ranks 2.. send it their shares of four
  // times that: its connection's ACKs come back through the switch's queue toward it, which a
  // transport with a bounded window (bbr) feels as a longer round trip, and its link idles
  // (bench/incast_outbound.sh). Rank 1 measures the rate. The incast lasts four times what
  // rank 0 needs at a link's rate, so a share down to 1/5 reads as it is (a rank 0 still
  // sending after the incast ends gets the link back).
  bool IncastSend() {
    const Bytes share = std::max<Bytes>(1, (4 * k_ + n_ - 3) / static_cast<Bytes>(n_ - 2));
    std::vector<int> to, from;
    Bytes sends = 0, receives = 0;
    if (me_ == 0) {
      to = {1};
      sends = k_;
      for (int p = 2; p < n_; ++p) from.push_back(p);
      receives = share;
    } else if (me_ == 1) {
      from = {0};
      receives = k_;
    } else {
      to = {0};
      sends = share;
    }
    double unused = std::nan("");
    for (int rep = 0; rep < kDirectionRepeats; ++rep) {
      if (!Barrier(3 * kDirectionRepeats + rep) ||
          !Pattern(kIncastSend, rep, to, sends, from, receives,
                   me_ == 1 ? &incast_send_gbps_ : &unused)) {
        return false;
      }
    }
    return true;
  }

  RealBackend& b_;
  const DoctorOptions& o_;
  const testbed::Layout* layout_;
  const int n_, me_;
  const Bytes k_;  // messages per direction
  RingSteps steps_;
  std::vector<double> rx_gbps_, rtt_us_, retrans_;  // [peer]
  std::vector<double> alone_gbps_;  // [peer] measured again alone (NaN: not)
  bool alone_ = false;              // Direction() measures for Confirm()
  bool steps_measured_ = false;     // Steps() ran the ring steps
  double ring_gbps_ = std::nan(""), alltoall_gbps_ = std::nan(""), incast_gbps_ = std::nan("");
  double incast_send_gbps_ = std::nan("");  // rank 1: what rank 0 sent it under incast
};

}  // namespace

std::string SharedHost(const std::vector<std::string>& addresses) {
  std::map<std::string, int> first;
  for (int r = 0; r < static_cast<int>(addresses.size()); ++r) {
    std::string ip = addresses[static_cast<size_t>(r)];
    const size_t colon = ip.rfind(':');
    if (colon != std::string::npos) ip.resize(colon);
    if (ip.size() > 2 && ip.front() == '[' && ip.back() == ']') ip = ip.substr(1, ip.size() - 2);
    if (ip.rfind("127.", 0) == 0 || ip == "::1" || ip == "localhost") {
      return fmt::format("rank {} listens on loopback {}", r, ip);
    }
    auto [it, fresh] = first.emplace(ip, r);
    if (!fresh) return fmt::format("ranks {} and {} both listen on {}", it->second, r, ip);
  }
  return "";
}

int RunDoctorRank(const DoctorOptions& options, const launch::RankEnv& env) {
  DoctorOptions o = options;
  o.host = HostLabel(o.host);
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
  std::optional<testbed::Layout> layout;  // rank 0 on a testbed
  if (env.rank == 0) {
    if (!o.testbed.empty()) {
      auto loaded = testbed::Load(o.testbed);
      if (!loaded.ok()) return fail(loaded.status().message(), launch::kExitBadInput);
      layout = std::move(*loaded);
    }
    if (o.expect_bps > 0) {
      scan.expected_gbps = static_cast<double>(o.expect_bps) * report::kTcpGoodput / 8e9;
      scan.expected_source = "--expect " + FormatBitRate(o.expect_bps) + " x goodput 0.94";
    } else if (layout) {
      const uint64_t rate = layout->HostLinkRate();
      if (rate > 0) {
        scan.expected_gbps = static_cast<double>(rate) * report::kTcpGoodput / 8e9;
        scan.expected_source =
            "testbed " + o.testbed + ": host links at " + FormatBitRate(rate) + " x goodput 0.94";
      }
    }
  }
  auto identity = RankBackendOptions(env, o.bind);
  if (!identity.ok()) return fail(identity.status().message(), launch::kExitBadInput);
  real_backend::RealBackendOptions opt = std::move(*identity);
  opt.peer_timeout = o.peer_timeout;
  opt.transport = o.transport;
  opt.tcp_congestion = o.tcp_congestion;
  const int local = env.local_world_size > 0 ? env.local_world_size : env.world_size;
  opt.spin = loop::DefaultSleepPolicy(local).spin;
  auto created = RealBackend::Create(opt);
  if (!created.ok()) {
    return fail(created.status().message(),
                created.status().code() == Status::Code::kInvalidArgument ? launch::kExitBadInput
                                                                          : launch::kExitFailed);
  }
  RealBackend& b = **created;
  // Ranks on one host measure its loopback: refused before any figure (every rank sees the
  // same table, so all stop together), or marked loopback throughout with --allow-shared-host.
  if (const std::string shared = SharedHost(b.addresses()); !shared.empty()) {
    if (!o.allow_shared_host) {
      // Said by every rank, before its shutdown: the first rank to exit makes a launcher stop
      // the others, and a rank stopped mid-shutdown would say nothing.
      const int code = fail("ranks share a host (" + shared + "): a scan would measure that "
                            "machine's CPUs and loopback, not a fabric. Start one rank per host "
                            "(genie launch --testbed NAME -n HOSTS -- doctor, or mpiexec / srun "
                            "with one task per node, each with --bind on its NIC), or pass "
                            "--allow-shared-host to scan anyway with every figure marked loopback",
                            launch::kExitBadInput);
      (void)b.Shutdown();
      return code;
    }
    scan.loopback = true;
  }
  // Rank 0 writes --json and --report: checked by the output rule before the scan (the other
  // ranks are told why it stops).
  if (env.rank == 0) {
    if (Status out = record::CheckOutputs({{}, {o.json_path}, {o.report_path}, {}}); !out.ok()) {
      b.Abort(out);
      return fail(out.message(), launch::kExitBadInput);
    }
  }
  const TimeNs start = b.Now();
  // How contended this machine's CPUs are while the scan runs (rank 0's): a rank waiting for a
  // core measures its link slow, so findings made on a saturated machine may be the CPU's.
  const record::CpuPressureReading cpu_before = record::ReadCpuPressure();
  // The ring steps stay within a leaf of a leaf-spine testbed (one rank per host, rank i on
  // host i): a ring through a slower spine would measure the spine, not the hosts' stacks.
  int ring_group = 0;
  Shaper shaper;
  if (!o.testbed.empty()) {
    auto tb = layout ? Result<testbed::Layout>(*layout) : testbed::Load(o.testbed);
    if (tb.ok()) shaper = ShaperOf(*tb);
    scan.one_switch = tb.ok() && tb->spec.kind == testbed::TopologyKind::kStar;
    if (tb.ok() && tb->spec.kind == testbed::TopologyKind::kLeafSpine &&
        static_cast<int>(tb->hosts.size()) == env.world_size) {
      ring_group = tb->spec.hosts_per_leaf;
    }
  }
  Scan s(b, o, layout ? &*layout : nullptr, ring_group, shaper);
  // Rank 0 judges the pairs and patterns before the ring steps: on a fabric with findings they
  // would only time the fault (ten times longer behind a host at a tenth of its rate) for a
  // calibration that refuses such a fabric anyway.
  report::DoctorVerdict verdict;
  bool ok = s.Run() && s.Gather(&scan) && s.Paths(&scan);
  if (ok && env.rank == 0) verdict = report::Diagnose(scan, o.thresholds);
  if (scan.loopback) verdict.findings.clear();  // no verdict on a fabric the scan never saw
  const bool steps = o.ring_steps == RingStepsMode::kAlways ||
                     (o.ring_steps == RingStepsMode::kHealthy && verdict.healthy());
  if (!ok || !s.Steps(steps)) {
    // The scan could not finish: that is itself a finding about the fabric, but not a verdict.
    b.Abort(b.status());
    return fail("the scan could not finish: " + b.status().message(), launch::kExitBadInput);
  }
  scan.seconds = static_cast<double>(b.Now() - start) / 1e9;
  const record::CpuPressure cpu = record::PressureBetween(cpu_before, record::ReadCpuPressure());
  Status st = b.Shutdown();
  if (env.rank != 0) return st.ok() ? 0 : launch::kExitBadInput;
  std::cout << report::FormatDoctorReport(scan, verdict) << std::flush;
  if (cpu.contended()) {
    std::cout << "# CPU contended during the scan on rank 0's machine (" << cpu.Describe() << "): "
              << (verdict.healthy()
                      ? "the figures carry this machine's CPU as well as the links"
                      : "the findings above may be the CPU's, not the network's (a rank waiting "
                        "for a core measures its link slow); scan again when the machine is "
                        "quieter before acting on them")
              << "\n"
              << std::flush;
  }
  if (!s.steps_measured() && o.ring_steps == RingStepsMode::kHealthy) {
    std::cout << "ring steps (what genie testbed calibrate fits) not measured: the scan has "
                 "findings; --ring-steps always measures them anyway\n"
              << std::flush;
  }
  if (!o.json_path.empty()) {
    nlohmann::json j = report::DoctorJson(scan, verdict);
    if (s.steps_measured()) j["ring_steps"] = s.RingStepsJson();
    j["cpu_pressure"] = cpu.ToJson();
    Status w = report::WriteFileAtomically(o.json_path, j.dump(1) + "\n");
    if (!w.ok()) return fail(w.message(), launch::kExitBadInput);
  }
  if (!o.report_path.empty()) {
    Status w = report::html::WriteReportFromPanels(
        {report::html::DoctorPanel(report::DoctorJson(scan, verdict),
                                   o.json_path.empty() ? "genie doctor" : o.json_path)},
        o.report_path);
    if (!w.ok()) return fail("--report: " + w.message(), launch::kExitBadInput);
  }
  return verdict.healthy() ? 0 : 1;
}

}  // namespace genie::driver
