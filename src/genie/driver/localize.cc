#include "genie/driver/localize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "genie/driver/iteration_driver.h"
#include "genie/driver/pair_probe.h"
#include "genie/driver/pair_rounds.h"
#include "genie/runtime/collective_runner.h"

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
  const auto rounds = PairRounds(n);
  for (size_t r = 0; r < rounds.size(); ++r) {
    for (auto [a, c] : rounds[r]) {
      if (me != a && me != c) continue;
      const int peer = me == a ? c : a;
      if (!used(peer)) continue;
      const auto p = static_cast<size_t>(peer);
      // Round trips before and after the transfers (the lower median is kept), each direction
      // twice (the better rate): a fault slows every one, a busy core only some.
      auto pings = [&](int which) {
        double median = std::nan("");
        if (!MeasurePings(b, a, c, Tag(r, 1000 + 2 * which), o.pings, &median)) return false;
        if (!std::isnan(median)) rtt[p] = std::isnan(rtt[p]) ? median : std::min(rtt[p], median);
        return true;
      };
      if (!pings(0)) return fail();
      for (int k = 0; k < kRepeats; ++k) {
        for (auto [from, to] : {std::pair{a, c}, std::pair{c, a}}) {
          DirectionFigures f;
          const uint64_t tag = Tag(r, 10 * (2 * k + (from == a ? 0 : 1)));
          if (!MeasureDirection(b, from, to, tag, o.message, count, &f)) return fail();
          if (me == to && (std::isnan(rx[p]) || f.gbps > rx[p])) rx[p] = f.gbps;
          if (me == from) {
            sent[p] += f.sender_delta.out;
            resent[p] += f.sender_delta.Resent();
          }
        }
      }
      if (!pings(1)) return fail();
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
  return nlohmann::json{{"rank", me},
                        {"host", o.host},
                        {"bytes_per_direction", count * o.message},
                        {"peers", std::move(peers)}};
}

}  // namespace genie::driver
