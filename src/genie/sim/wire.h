// Wire: something that serializes one message at a time at a fixed bandwidth — a link of the
// congestion-aware model, or a flow of the congestion-unaware one (network_model.h).
// ASTRA-sim truncates each message's delays to whole ns, and a message queued behind another
// starts at the whole ns the wire frees (astra-network-analytical's Link: integer event times,
// free at start + floor(bytes/bw)). Applied to small pieces fed back to back, that rounding
// loses up to 1 ns per piece: 16-byte slices on a 50 GB/s link (0.3 ns each) would serialize
// in no time and a sliced collective would beat the link's bandwidth. A Wire therefore keeps
// the fraction of a ns its last message ends at, and a message offered by that ns starts from
// there when the caller asks (`carry_fraction`: the messages may be pieces). Otherwise, and on
// an idle wire, a message gets exactly ASTRA-sim's delays from the whole ns it starts at:
// floor(latency + bytes/bw) to arrive, floor(bytes/bw) to free the wire.
// Value type; single-threaded like the model that owns it.
#pragma once

#include <cmath>
#include <cstdint>

#include "genie/common/checked_math.h"
#include "genie/common/units.h"

namespace genie::sim {

class Wire {
 public:
  struct Times {
    TimeNs free_delay = 0;     // from now until the wire is free again (whole ns)
    TimeNs arrival_delay = 0;  // from now until the message has arrived (whole ns)
    TimeNs free_ns = 0;        // the wire's state once the message is on it (see Put)
    double free_frac = 0;
  };
  // What a message that takes `serialization_ns` on this wire, and `latency_ns` more to
  // arrive, would cost if offered at `now`: it starts once the wire is free, at the fraction
  // of a ns the last message ended at with `carry_fraction`, else at the whole ns. Delays that
  // do not fit in TimeNs saturate at kMaxTimeNs, which the event queue refuses (the caller
  // reports it and does not Put the message).
  // Inline: every message of either model is priced here.
  Times Serialize(TimeNs now, double latency_ns, double serialization_ns,
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
    // floor(end) is its truncation for 0 <= end < 2^63 (end >= 0 here), which the conversion
    // gives at once where std::floor is a libm call without SSE4.1: the same bits either way.
    if (end >= 0 && end < 0x1p63) {
      t.free_frac = end - static_cast<double>(static_cast<int64_t>(end));
    } else {
      t.free_frac = std::isfinite(end) ? end - std::floor(end) : 0;
    }
    return t;
  }
  // True when a message offered at `now` finds the wire as a new one does (it starts at `now`,
  // at no fraction of a ns).
  bool IdleAt(TimeNs now) const { return free_ns_ < now || (free_ns_ == now && free_frac_ == 0); }
  // Puts the message Serialize priced on the wire.
  void Put(const Times& t) {
    free_ns_ = t.free_ns;
    free_frac_ = t.free_frac;
  }

 private:
  TimeNs free_ns_ = 0;    // the last message is serialized at free_ns_ + free_frac_
  double free_frac_ = 0;  // in [0, 1)
};

}  // namespace genie::sim
