#include "genie/driver/watchdog.h"

#include <algorithm>

namespace genie::driver {

ProgressMeter::ProgressMeter(TimeNs peer_timeout)
    : limit_(peer_timeout + std::min<TimeNs>(peer_timeout, 2 * kNsPerSec)) {}

void ProgressMeter::Start(TimeNs now, uint64_t bytes) {
  last_bytes_ = bytes;
  last_moved_ = now;
}

TimeNs ProgressMeter::Idle(TimeNs now, uint64_t bytes, TimeNs last_op) {
  if (bytes != last_bytes_) {
    last_bytes_ = bytes;
    last_moved_ = now;
  }
  return now - std::max(last_op, last_moved_);
}

Watchdog::Watchdog(real_backend::RealBackend& backend, const IterationDriver& driver,
                   TimeNs peer_timeout, std::function<void(const Status&)> fire)
    : backend_(backend), driver_(driver), meter_(peer_timeout), fire_(std::move(fire)) {}

void Watchdog::Start() {
  meter_.Start(backend_.Now(), BytesMoved());
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
    if (peer != backend_.rank()) bytes += WireBytes(backend_.counters(peer));
  }
  return bytes;
}

void Watchdog::Check() {
  if (driver_.finished()) return;
  const TimeNs now = backend_.Now();
  const runtime::Executor& ex = driver_.executor();
  const TimeNs idle =
      meter_.Idle(now, BytesMoved(), std::max(ex.last_progress(), driver_.iteration_start()));
  if (driver_.in_iteration() && ex.busy_until() <= now && idle > meter_.limit()) {
    fire_(Status::Timeout("no progress for " + FormatDuration(idle) +
                          " (no op started or finished, no byte moved; --peer-timeout); still "
                          "waiting:\n" +
                          ex.DescribePending()));
    return;
  }
  CheckLater();
}

}  // namespace genie::driver
