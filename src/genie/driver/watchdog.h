// Watchdog: ends a real run whose rank has stopped making progress although its peers are
// alive (the transport's liveness check names a silent peer itself): a rank waiting for a
// message no peer will ever send, as when two ranks' traces disagree.
//
// Progress is judged by what moves, not by what completes: an op starting or finishing, payload
// bytes moving on any of the rank's connections — as they move, a message's partial progress
// included (PeerCounters::wire_bytes_*), so that one message lasting many times the limit on a
// slow link is not a hang — or a timed op of this rank (a compute node) still due to end.
// Heartbeats and other control frames are not progress: a rank waiting forever still hears
// its peers' heartbeats. The limit is the peer timeout plus up to 2 s, so that a peer gone
// silent is named by the liveness check (which fires at the peer timeout) before this fires.
// What it cannot see: a peer that computes for longer than the limit while this rank waits for
// it with no other traffic — raise --peer-timeout above the workload's longest compute node for
// such a trace.
//
// ProgressMeter holds the rule on plain numbers (unit-tested without a backend); Watchdog feeds
// it from the backend once a second. Threading: the backend's loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "genie/common/status.h"
#include "genie/driver/iteration_driver.h"
#include "genie/net/transport.h"
#include "genie/real_backend/real_backend.h"

namespace genie::driver {

// Payload bytes that moved to and from one peer so far, partial messages included.
inline uint64_t WireBytes(const net::PeerCounters& c) {
  return c.wire_bytes_sent + c.wire_bytes_received;
}

class ProgressMeter {
 public:
  explicit ProgressMeter(TimeNs peer_timeout);
  TimeNs limit() const { return limit_; }
  // `bytes`: the rank's WireBytes summed over its peers, now.
  void Start(TimeNs now, uint64_t bytes);
  // How long nothing moved at `now`: neither `bytes` (since the last sample) nor an op
  // (`last_op`: when one last started or finished, or the iteration began).
  TimeNs Idle(TimeNs now, uint64_t bytes, TimeNs last_op);

 private:
  TimeNs limit_;
  uint64_t last_bytes_ = 0;
  TimeNs last_moved_ = 0;
};

class Watchdog {
 public:
  // `fire` gets a Timeout status naming how long and what the rank waits on.
  Watchdog(real_backend::RealBackend& backend, const IterationDriver& driver, TimeNs peer_timeout,
           std::function<void(const Status&)> fire);
  // Pending checks are dropped: they may still be on the loop (which runs on, e.g. for the
  // orderly shutdown) when the watchdog is gone.
  ~Watchdog() { *alive_ = false; }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Checks once a second until the driver finishes or the watchdog fires.
  void Start();

 private:
  void Check();
  void CheckLater();
  uint64_t BytesMoved() const;

  real_backend::RealBackend& backend_;
  const IterationDriver& driver_;
  ProgressMeter meter_;
  std::function<void(const Status&)> fire_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace genie::driver
