#include "genie/driver/localize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "genie/driver/iteration_driver.h"
#include "genie/driver/pair_paths.h"
#include "genie/driver/pair_probe.h"
#include "genie/driver/pair_rounds.h"
#include "genie/runtime/collective_runner.h"
#include "genie/testbed/control.h"

namespace genie::driver {
namespace {

// Bit 62 is the iteration barriers' (iteration_driver.cc: bit 62 | barrier count << 32); the
// probe takes count 0xffff, its closing barrier 0xfffe, which no run reaches.
constexpr uint64_t kProbeTags = (uint64_t{1} << 62) | (uint64_t{0xffff} << 32);
constexpr uint64_t kBarrierTags = (uint64_t{1} << 62) | (uint64_t{0xfffe} << 32);
uint64_t Tag(size_t round, int purpose) {
  return kProbeTags | (static_cast<uint64_t>(round) << 12) | static_cast<uint64_t>(purpose);
}
constexpr int kRepeats = 2;
// The token barriers between pairs probed one at a time (count 0xfffd).
constexpr uint64_t kTokenTags = (uint64_t{1} << 62) | (uint64_t{0xfffd} << 32);
constexpr size_t kTokenLabelBytes = 64;

// The real ranks' world barrier, as between iterations (iteration_driver.h: a token round the
// ring, over connections every run has): no rank leaves the probe, and rank 0 clears no fault,
// while another still measures.
Status WorldBarrier(real_backend::RealBackend& b) {
  collective::Schedule schedule = IterationDriver::TokenRingBarrier(b.world_size(), b.rank());
  bool done = false;
  runtime::CollectiveRunner barrier(b, std::move(schedule), kBarrierTags, runtime::LocalCosts{}, 0,
                                    collective::SchedulingPolicy::kFifo, nullptr, [&] {
                                      done = true;
                                      b.Stop();
                                    });
  barrier.Start();
  if (!done && b.status().ok()) b.Run();
  if (!b.status().ok()) return b.status();
  return done ? Status::Ok() : Status::Internal("localize: the closing barrier did not finish");
}

// A token twice round the ring (over connections every run has), carrying every rank's label
// (rank 0 has them all after the first pass) and whether the pair just probed ran (`ran`, set
// by its ranks). Between the passes, while every rank waits, rank 0 calls `quiet(ran)`.
bool TokenBarrier(real_backend::RealBackend& b, uint64_t k, const std::string& label, bool ran,
                  std::string* labels, const std::function<void(bool)>& quiet) {
  const int me = b.rank(), n = b.world_size();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const uint64_t token = kTokenTags | (k << 2), release = token | 1;
  std::string& buf = *labels;  // n labels, then the flag
  buf.resize(static_cast<size_t>(n) * kTokenLabelBytes + 1, '\0');
  std::string out;
  auto mark = [&] {
    std::string padded = label.substr(0, kTokenLabelBytes - 1);
    padded.resize(kTokenLabelBytes, '\0');
    buf.replace(static_cast<size_t>(me) * kTokenLabelBytes, kTokenLabelBytes, padded);
    if (ran) buf.back() = 1;
    out = buf;
  };
  Batch batch(b);
  if (me == 0) {
    buf.back() = 0;
    mark();
    batch.Send(next, token, out.size(), out.data());
    batch.Recv(prev, token, buf.size(), buf.data());
    if (!batch.Wait()) return false;
    quiet(buf.back() != 0);
    batch.Send(next, release, 0);
    batch.Recv(prev, release, 0);
    return batch.Wait();
  }
  batch.Recv(prev, token, buf.size(), buf.data());
  if (!batch.Wait()) return false;
  mark();
  batch.Send(next, token, out.size(), out.data());
  batch.Recv(prev, release, 0);
  if (!batch.Wait()) return false;
  batch.Send(next, release, 0);
  return batch.Wait();
}

// The layout of `testbed` when it is a leaf-spine (every rank reads the same description).
std::optional<testbed::Layout> LeafSpine(const std::string& testbed) {
  if (testbed.empty()) return std::nullopt;
  auto layout = testbed::Load(testbed);
  if (!layout.ok() || layout->spec.kind != testbed::TopologyKind::kLeafSpine) return std::nullopt;
  return std::move(*layout);
}

nlohmann::json PathsJson(const std::vector<report::TransferPath>& paths) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : paths) {
    nlohmann::json crossings = nlohmann::json::array();
    for (const auto& c : p.crossings) {
      crossings.push_back({{"link", c.link}, {"from", c.from}, {"to", c.to}, {"share", c.share},
                           {"held", c.held}});
    }
    out.push_back({{"from", p.from}, {"to", p.to}, {"crossings", std::move(crossings)}});
  }
  return out;
}

}  // namespace

Result<nlohmann::json> ProbeUsedLinks(real_backend::RealBackend& b, const LocalizeOptions& o) {
  const int me = b.rank(), n = b.world_size();
  if (o.message == 0 || o.bytes < o.message) {
    return Status::InvalidArgument("localize: the probe's bytes must be at least one message");
  }
  const Bytes count = std::max<Bytes>(2, (o.bytes + o.message - 1) / o.message);
  // Both ranks of a pair agree on whether it was used: every byte sent was received. Bytes,
  // not messages: the iteration barrier's zero-byte release goes from rank 0 to ranks the
  // workload may never talk to (iteration_driver.h), and those pairs carried no traffic.
  auto used = [&](int peer) {
    const auto& c = b.counters(peer);
    return c.bytes_sent + c.bytes_received > 0;
  };
  const auto size = static_cast<size_t>(n);
  std::vector<double> rx(size, std::nan("")), rtt(size, std::nan(""));
  std::vector<double> sent(size, 0), resent(size, 0);
  auto fail = [&] { return b.status().WithDetail("localize: the probe after the run failed"); };
  auto probe = [&](size_t r, int a, int c) {
    const int peer = me == a ? c : a;
    const auto p = static_cast<size_t>(peer);
    // Round trips before and after the transfers (the lower median is kept), each direction
    // twice (the better rate): a fault slows every one, a busy core only some.
    auto pings = [&](int which) {
      double median = std::nan("");
      if (!MeasurePings(b, a, c, Tag(r, 1000 + 2 * which), o.pings, &median)) return false;
      if (!std::isnan(median)) rtt[p] = std::isnan(rtt[p]) ? median : std::min(rtt[p], median);
      return true;
    };
    if (!pings(0)) return false;
    for (int k = 0; k < kRepeats; ++k) {
      for (auto [from, to] : {std::pair{a, c}, std::pair{c, a}}) {
        DirectionFigures f;
        const uint64_t tag = Tag(r, 10 * (2 * k + (from == a ? 0 : 1)));
        if (!MeasureDirection(b, from, to, tag, o.message, count, &f)) return false;
        if (me == to && (std::isnan(rx[p]) || f.gbps > rx[p])) rx[p] = f.gbps;
        if (me == from) {
          sent[p] += f.sender_delta.out;
          resent[p] += f.sender_delta.Resent();
        }
      }
    }
    return pings(1);
  };
  const auto rounds = PairRounds(n);
  nlohmann::json paths = nlohmann::json::array();
  if (std::optional<testbed::Layout> layout = LeafSpine(o.testbed)) {
    // One pair at a time, rank 0 reading the switches' counters after each that crossed leaves.
    std::optional<PairPaths> learner;
    std::string labels;
    uint64_t k = 0;
    auto start = [&](bool) {
      std::vector<std::string> hosts;
      for (int i = 0; i < n; ++i) hosts.push_back(labels.substr(static_cast<size_t>(i) * kTokenLabelBytes).c_str());
      learner.emplace(&*layout, hosts);
      learner->Read();
    };
    if (!TokenBarrier(b, k++, o.host, false, &labels, start)) return fail();
    for (size_t r = 0; r < rounds.size(); ++r) {
      for (auto [a, c] : rounds[r]) {
        const bool mine = (me == a || me == c) && used(me == a ? c : a);
        if (mine && !probe(r, a, c)) return fail();
        auto after = [&, a = a, c = c](bool ran) {
          if (!ran) return;
          if (learner->Crosses(a, c)) {
            learner->Read();
            learner->Attribute(a, c);
          } else {
            learner->WithinLeaf(a, c);
            learner->Restart();
          }
        };
        if (!TokenBarrier(b, k++, o.host, mine, &labels, after)) return fail();
      }
    }
    if (learner) paths = PathsJson(learner->paths());
  } else {
    for (size_t r = 0; r < rounds.size(); ++r) {
      for (auto [a, c] : rounds[r]) {
        if (me != a && me != c) continue;
        if (used(me == a ? c : a) && !probe(r, a, c)) return fail();
      }
    }
  }
  if (Status st = WorldBarrier(b); !st.ok()) {
    return st.WithDetail("localize: waiting for the other ranks' probes");
  }
  nlohmann::json peers = nlohmann::json::array();
  for (int peer = 0; peer < n; ++peer) {
    const auto p = static_cast<size_t>(peer);
    if (peer == me || !used(peer)) continue;
    nlohmann::json e = {{"peer", peer}};
    if (!std::isnan(rx[p])) e["rx_gbps"] = rx[p];
    if (!std::isnan(rtt[p])) e["rtt_us"] = rtt[p];
    if (sent[p] > 0) e["retrans"] = resent[p] / sent[p];
    peers.push_back(std::move(e));
  }
  nlohmann::json record = {{"rank", me},
                           {"host", o.host},
                           {"bytes_per_direction", count * o.message},
                           {"peers", std::move(peers)}};
  if (!paths.empty()) record["paths"] = std::move(paths);
  return record;
}

}  // namespace genie::driver
