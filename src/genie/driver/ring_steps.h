// RingSteps: `genie doctor`'s calibration-under-load probe. Every host at once, each in a ring,
// sends one message per step to its next rank and the next one once its previous rank's
// arrived, as a ring all-reduce does, for message sizes from 8 KiB to 4 MiB. The step times
// (steady, and with every token bucket full) and their fit (step = alpha + bytes / rate) are
// what `genie testbed calibrate` turns into the flow model's goodput and per-message costs
// (testbed/calibration.h). Every rank of the scan calls Measure() then Gather() with the same
// arguments; rank 0 then has ToJson(). Like pair_probe.h, the calls run the backend's loop:
// use them on the rank's loop thread, outside any loop callback.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"
#include "genie/testbed/layout.h"

namespace genie::driver {

// Links behind a token-bucket shaper (a testbed's tbf): the steps wait for the buckets to fill
// before each measurement, time the first step and a size's early steps with every bucket full
// (what the hosts' software takes: burst_message_times), and time the steady steps only once
// warm-up steps have spent the buckets (message_times). burst 0: no shaper known.
struct Shaper {
  Bytes burst = 0;       // the largest bucket of a link, bytes
  TimeNs refill_ns = 0;  // the longest a bucket takes to fill at its link's rate
};
Shaper ShaperOf(const testbed::Layout& layout);

class RingSteps {
 public:
  // A tag unique to each measurement (`round`), the same on every rank.
  using TagFn = std::function<uint64_t(int round)>;
  // Every rank waits for every other (`which` tells the barriers apart).
  using BarrierFn = std::function<bool(int which)>;

  // `ring_group`: the steady steps run in rings of this many consecutive ranks (a leaf's hosts,
  // so that no step waits on a slower spine), the first and early ones then again in the ring of
  // all ranks (within a bucket the spine does not slow them, and a job's rings span the
  // leaves); 0, or one that does not divide the ranks: one ring of all for everything.
  // `steps_tag` tags the steps' messages, `gather_tag` the figures sent to rank 0.
  RingSteps(real_backend::RealBackend& b, int ring_group, Shaper shaper, TagFn steps_tag,
            uint64_t gather_tag, BarrierFn barrier);

  // Every rank: the steps, this rank's median per size. False when the backend failed.
  bool Measure();
  // Rank 0: every rank's figures, their mean per size. Other ranks: send theirs.
  bool Gather();
  // Rank 0, after Gather: the figures and their fit (doctor JSON "ring_steps").
  nlohmann::json ToJson() const;

 private:
  real_backend::RealBackend& b_;
  const int n_, me_;
  const int group_;  // ranks per ring
  const Shaper shaper_;
  const TagFn steps_tag_;
  const uint64_t gather_tag_;
  const BarrierFn barrier_;
  std::vector<double> step_ns_;       // [size] this rank's median steady step
  std::vector<double> first_ns_;      // [size] this rank's median first step (buckets full)
  std::vector<double> early_ns_;      // [size] this rank's median early step (buckets full)
  std::vector<double> step_ns_all_;   // rank 0: [size] the means over the ranks
  std::vector<double> first_ns_all_;
  std::vector<double> early_ns_all_;
};

}  // namespace genie::driver
