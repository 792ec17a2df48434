#include "genie/driver/ring_steps.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <thread>
#include <utility>

#include "genie/driver/pair_probe.h"

namespace genie::driver {
namespace {

// Message sizes and steps per measurement, small to large, so that a fit of step time =
// alpha + bytes / rate holds from the chunks of a small all-reduce to bulk transfers. Each size
// is measured kStepRepeats times and the median kept.
struct StepSize {
  Bytes message;
  int steps;
};
// Every power of two from 8 KiB to 4 MiB (the flow model interpolates between them,
// message_times); fewer steps as they grow, so the probe costs about what the four sizes of
// its first version did (a slow host makes every large step long).
constexpr StepSize kStepSizes[] = {{8 << 10, 40},   {16 << 10, 32},  {32 << 10, 24},
                                   {64 << 10, 16},  {128 << 10, 12}, {256 << 10, 8},
                                   {512 << 10, 6},  {1 << 20, 4},    {2 << 20, 3},
                                   {4 << 20, 3}};
constexpr int kNumStepSizes = static_cast<int>(std::size(kStepSizes));
constexpr int kStepRepeats = 9;
// A size a bucket lets out three or more at a time is measured this many times more per
// repeat: its early steps, a chain of short steps, set the floor of a collective's small
// messages, and one chain's mean step moves 2x between repeats on shared cores (star:8 at
// 1 Gbit/s, 8 KiB: 33-87 us within one rank), so a median of 9 moved 47-65 us between
// calibrations where the job's steps held 45-50. 27 chains: +0.3 s per calibration (star:8).
constexpr int kChainRepeats = 2;
constexpr int kRoundsPerRepeat = 2 * (1 + kChainRepeats);  // a ring, and one of every rank

// Steps before the steady ones: enough bytes to spend 4 buckets (each step refills part of
// one), at most this many.
constexpr int kMaxWarmSteps = 64;

}  // namespace

Shaper ShaperOf(const testbed::Layout& layout) {
  Shaper s;
  for (const testbed::Link& l : layout.links) {
    if (l.burst_bytes == 0 || l.rate_bps == 0) continue;
    s.burst = std::max(s.burst, l.burst_bytes);
    s.refill_ns = std::max<TimeNs>(
        s.refill_ns, static_cast<TimeNs>(static_cast<double>(l.burst_bytes) * 8e9 /
                                         static_cast<double>(l.rate_bps)));
  }
  return s;
}

RingSteps::RingSteps(real_backend::RealBackend& b, int ring_group, Shaper shaper, TagFn steps_tag,
                     uint64_t gather_tag, BarrierFn barrier)
    : b_(b),
      n_(b.world_size()),
      me_(b.rank()),
      group_(ring_group >= 2 && n_ % ring_group == 0 ? ring_group : n_),
      shaper_(shaper),
      steps_tag_(std::move(steps_tag)),
      gather_tag_(gather_tag),
      barrier_(std::move(barrier)) {}

// A step's time, from the first arrival to the last over the steps between them (the start's
// skew left out), is what a collective's step costs with every host's stack busy, which on a
// testbed sharing a few cores is more than one pair alone pays (calibration.h).
bool RingSteps::Measure() {
  // The ring of `group` consecutive ranks this rank is in: its next and previous rank.
  auto neighbours = [&](int group) {
    const int base = me_ / group * group;
    return std::pair<int, int>{base + (me_ - base + 1) % group,
                               base + (me_ - base + group - 1) % group};
  };
  step_ns_.assign(kNumStepSizes, std::nan(""));
  first_ns_.assign(kNumStepSizes, std::nan(""));
  early_ns_.assign(kNumStepSizes, std::nan(""));
  std::vector<std::vector<double>> per_step(kNumStepSizes), first_step(kNumStepSizes),
      early_step(kNumStepSizes);

  // One measurement: after a barrier and the buckets' refill, `steps` steps round the ring of
  // `group`; the early steps (from the first arrival: a collective's few steps after a pause)
  // and, after `warm` steps, the steady ones; `steady` and `burst` say which to keep.
  auto ring = [&](int i, int round, int group, int steps, int warm, int early, bool steady,
                  bool burst) {
    const Bytes message = kStepSizes[i].message;
    const auto [next, prev] = neighbours(group);
    if (!barrier_(round)) return false;
    // The links idle long enough for every bucket to fill (the barrier's small messages
    // leave them nearly full).
    if (shaper_.refill_ns > 0) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(2 * shaper_.refill_ns));
    }
    Batch batch(b_);
    const uint64_t tag = steps_tag_(round);
    TimeNs first = 0, early_end = 0, from = 0, last = 0;
    const TimeNs sent = b_.Now();
    batch.Send(next, tag, message);
    for (int k = 0; k < steps; ++k) {
      batch.Recv(prev, tag, message, nullptr, [&, k] {
        if (k == 0) first = b_.Now();
        if (k == early) early_end = b_.Now();
        if (k == warm) from = b_.Now();
        if (k + 1 < steps) {
          batch.Send(next, tag, message);
        } else {
          last = b_.Now();
        }
      });
    }
    if (!batch.Wait()) return false;
    const auto at = static_cast<size_t>(i);
    if (steady && last > from) {
      per_step[at].push_back(static_cast<double>(last - from) / (steps - 1 - warm));
    }
    // From this rank's send to its previous rank's first message: the ranks' skew cancels
    // in the mean over a ring (Gather), each rank's late start counted once each way.
    if (burst && first > sent) first_step[at].push_back(static_cast<double>(first - sent));
    if (burst && early_end > first) {
      early_step[at].push_back(static_cast<double>(early_end - first) / early);
    }
    return true;
  };

  // Repeats round-robin over the sizes (all sizes once, then again): a burst of other load
  // on a shared machine lands on one repeat of several sizes, which the median drops,
  // rather than on every repeat of one size, which would bend the table there. Largest
  // first, so that each size follows the next larger one, not the largest: after bulk
  // transfers BBR paces small messages at its bandwidth estimate for longer than the warm-up
  // steps (star:8 at 1 Gbit/s, bbr: 8 KiB steps 125-165 us after a 4 MiB size, 90-100 us after
  // 16 KiB, as in a 64 KiB all-reduce repeated; under cubic 87-101 either way).
  for (int rep = 0; rep < kStepRepeats; ++rep) {
    for (int i = kNumStepSizes - 1; i >= 0; --i) {
      const StepSize& size = kStepSizes[i];
      const int warm =
          shaper_.burst == 0
              ? 0
              : static_cast<int>(std::min<Bytes>(
                    kMaxWarmSteps, (4 * shaper_.burst + size.message - 1) / size.message));
      const int steps = size.steps + warm;
      // The early steps: as many as the size's own, but behind a shaper no more than a
      // bucket lets out at once (what burst_message_times stands for: none of them waits on
      // a link's rate).
      const int in_burst = shaper_.burst == 0
                               ? size.steps
                               : static_cast<int>(shaper_.burst / size.message) - 1;
      const int early = std::clamp(in_burst, 1, std::min(size.steps, steps - 1));
      const int round0 = kRoundsPerRepeat * (i * kStepRepeats + rep);
      // Rings within a leaf give the steady steps (no step waits on a slower spine). The first
      // and early steps of a size a bucket lets out at once (three messages or more) come from
      // the ring of every rank instead: a job's collectives span the leaves, and on a few
      // shared cores a longer ring's steps wait longer on its ranks' wake-ups
      // (docs/prediction.md, "The probe"). A larger size's would wait on the spine's rate.
      const bool chain = in_burst >= 2;
      const bool across = group_ < n_ && chain;
      for (int c = 0; c <= (chain ? kChainRepeats : 0); ++c) {
        const int round = round0 + 2 * c;
        if (!ring(i, round, group_, steps, warm, early, true, !across)) return false;
        if (across && !ring(i, round + 1, n_, early + 1, 0, early, false, true)) return false;
      }
    }
  }
  auto median = [](std::vector<double>& v) {
    if (v.empty()) return std::nan("");
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (int i = 0; i < kNumStepSizes; ++i) {
    step_ns_[static_cast<size_t>(i)] = median(per_step[static_cast<size_t>(i)]);
    first_ns_[static_cast<size_t>(i)] = median(first_step[static_cast<size_t>(i)]);
    early_ns_[static_cast<size_t>(i)] = median(early_step[static_cast<size_t>(i)]);
  }
  return true;
}

bool RingSteps::Gather() {
  std::vector<double> row(step_ns_);
  row.insert(row.end(), first_ns_.begin(), first_ns_.end());
  row.insert(row.end(), early_ns_.begin(), early_ns_.end());
  const Bytes row_bytes = row.size() * sizeof(double);
  Batch batch(b_);
  if (me_ != 0) {
    batch.Send(0, gather_tag_, row_bytes, row.data());
    return batch.Wait();
  }
  const auto n = static_cast<size_t>(n_);
  std::vector<std::vector<double>> rows(n, std::vector<double>(row.size()));
  rows[0] = row;
  for (int p = 1; p < n_; ++p) {
    batch.Recv(p, gather_tag_, row_bytes, rows[static_cast<size_t>(p)].data());
  }
  if (!batch.Wait()) return false;
  // Ring steps: the mean over the ranks (in lockstep they differ only by noise).
  // `every_rank`: a mean only over every rank (the first step's is skew-free only then).
  auto mean_over_ranks = [&](size_t offset, bool every_rank, std::vector<double>* out) {
    out->assign(kNumStepSizes, std::nan(""));
    for (size_t i = 0; i < static_cast<size_t>(kNumStepSizes); ++i) {
      double sum = 0;
      size_t count = 0;
      for (size_t r = 0; r < n; ++r) {
        const double v = rows[r][offset + i];
        if (std::isnan(v)) continue;
        sum += v;
        ++count;
      }
      if (count > 0 && (!every_rank || count == n)) (*out)[i] = sum / count;
    }
  };
  mean_over_ranks(0, false, &step_ns_all_);
  mean_over_ranks(kNumStepSizes, true, &first_ns_all_);
  mean_over_ranks(2 * kNumStepSizes, false, &early_ns_all_);
  return true;
}

nlohmann::json RingSteps::ToJson() const {
  std::vector<double> sizes, ns, first, early;
  for (int i = 0; i < kNumStepSizes; ++i) {
    if (std::isnan(step_ns_all_[static_cast<size_t>(i)])) continue;
    sizes.push_back(static_cast<double>(kStepSizes[i].message));
    ns.push_back(step_ns_all_[static_cast<size_t>(i)]);
    first.push_back(first_ns_all_[static_cast<size_t>(i)]);
    early.push_back(early_ns_all_[static_cast<size_t>(i)]);
  }
  nlohmann::json j = {{"ring", group_}, {"message_bytes", sizes}, {"step_ns", ns}};
  // With a shaper: its bucket, and the first step and the early steps of each size with
  // every bucket full (null: not measured).
  if (shaper_.burst > 0) {
    j["burst_bytes"] = shaper_.burst;
    auto list = [](const std::vector<double>& v) {
      nlohmann::json out = nlohmann::json::array();
      for (double x : v) out.push_back(std::isnan(x) ? nlohmann::json() : nlohmann::json(x));
      return out;
    };
    j["first_step_ns"] = list(first);
    j["early_step_ns"] = list(early);
  }
  // Step time = alpha + bytes / rate, least squares on relative error (weights 1 / t^2): a
  // prediction is judged by its ratio, at every size alike.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double w = 1 / (ns[i] * ns[i]);
    sw += w;
    sx += w * sizes[i];
    sy += w * ns[i];
    sxx += w * sizes[i] * sizes[i];
    sxy += w * sizes[i] * ns[i];
  }
  const double det = sw * sxx - sx * sx;
  if (sizes.size() >= 2 && det > 0) {
    const double slope = (sw * sxy - sx * sy) / det;  // ns per byte
    const double alpha = (sy - slope * sx) / sw;
    if (slope > 0) {
      j["alpha_ns"] = std::max(0.0, alpha);
      j["gbps"] = 1 / slope;  // bytes per ns = GB/s (1e9 B/s)
    }
  }
  return j;
}

}  // namespace genie::driver
