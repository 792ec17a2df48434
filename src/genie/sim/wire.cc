#include "genie/sim/wire.h"

#include <cmath>

#include "genie/common/checked_math.h"

namespace genie::sim {

Wire::Times Wire::Serialize(TimeNs now, double latency_ns, double serialization_ns,
                            bool carry_fraction) const {
  // Start: now on an idle wire; at the end of the previous message otherwise — its exact end
  // when carrying the fraction, else the whole ns (ASTRA-sim's).
  TimeNs start = now;
  double frac = 0;
  if (free_ns_ >= now) {
    start = free_ns_;
    if (carry_fraction) frac = free_frac_;
  }
  const TimeNs wait = start - now;
  // `frac + latency` first: with frac == 0 the sums are ASTRA-sim's, bit for bit.
  const double end = frac + serialization_ns;
  const double arrive = (frac + latency_ns) + serialization_ns;
  Times t;
  t.free_delay = SaturatingAdd(wait, SaturatingTimeNs(end));
  t.arrival_delay = SaturatingAdd(wait, SaturatingTimeNs(arrive));
  t.free_ns = SaturatingAdd(now, t.free_delay);
  t.free_frac = std::isfinite(end) ? end - std::floor(end) : 0;
  return t;
}

}  // namespace genie::sim
