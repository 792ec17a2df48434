#include "genie/driver/watchdog.h"

#include <algorithm>

namespace genie::driver {

Watchdog::Watchdog(runtime::RealBackend& backend, const IterationDriver& driver,
                   TimeNs peer_timeout, std::function<void(const Status&)> fire)
    : backend_(backend),
      driver_(driver),
      limit_(peer_timeout + std::min<TimeNs>(peer_timeout, 2 * kNsPerSec)),
      fire_(std::move(fire)) {}

void Watchdog::Start() {
  last_bytes_ = BytesMoved();
  last_moved_ = backend_.Now();
  CheckLater();
}

void Watchdog::CheckLater() {
  backend_.After(kNsPerSec, [this, alive = alive_] {
    if (*alive) Check();
  });
}

uint64_t Watchdog::BytesMoved() const {
  uint64_t bytes = 0;
  for (int peer = 0; peer < backend_.world_size(); ++peer) {
    if (peer == backend_.rank()) continue;
    const auto& c = backend_.counters(peer);
    bytes += c.bytes_sent + c.bytes_received;
  }
  return bytes;
}

void Watchdog::Check() {
  if (driver_.finished()) return;
  const TimeNs now = backend_.Now();
  const uint64_t bytes = BytesMoved();
  if (bytes != last_bytes_) {
    last_bytes_ = bytes;
    last_moved_ = now;
  }
  const runtime::Executor& ex = driver_.executor();
  const TimeNs last = std::max({ex.last_progress(), driver_.iteration_start(), last_moved_});
  const TimeNs idle = now - last;
  if (driver_.in_iteration() && ex.busy_until() <= now && idle > limit_) {
    fire_(Status::Timeout("no progress for " + FormatDuration(idle) +
                          " (no op started or finished, no byte moved; --peer-timeout); still "
                          "waiting:\n" +
                          ex.DescribePending()));
    return;
  }
  CheckLater();
}

}  // namespace genie::driver
