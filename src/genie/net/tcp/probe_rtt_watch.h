// ProbeRttWatch: how long a rank's TCP connections spend in bbr's PROBE_RTT.
//
// bbr (the kernel's tcp_bbr, v1) drains its queue to re-measure the path's round trip whenever
// its min RTT estimate is 10 s old: for at least 200 ms (and a round trip) the connection keeps
// 4 packets in flight, then restores its window, and the next probe is due 10 s later. The
// connections of a run open together, so they probe together ~10 s after they opened and then
// about every 10 s. What a connection moves meanwhile is a fraction of what it moved before:
// measured on a 2-core testbed at 1 Gbit/s (2026-12-07, `ss -tin` every 25 ms), one connection
// alone on its link ~40 MB/s of its ~120, two sharing a link 8-16 MB/s each. A training step
// that spans a probe is that much slower, with no fault anywhere: the transport's own.
//
// Only episodes of a busy connection count: one that had data waiting (more than kBacklogBytes
// in its send queue) at some sample of it. A connection that was idle when its probe came
// due enters PROBE_RTT as it next sends, often a few bytes of control: that costs nothing.
//
// Seen through TCP_CC_INFO: bbr's cwnd gain is 1 (BBR_UNIT) in PROBE_RTT and in no other mode
// of a connection with a bandwidth estimate (2 in PROBE_BW, 2.89 in STARTUP and DRAIN; a new
// connection, not yet measured, has unit gains and no estimate). The transport samples its
// sockets every kInterval (Sample) once one of them runs bbr: an episode's start and end are
// known to within it, and a 200 ms episode is seen four times. A socket of another congestion
// control answers nothing and is never in one.
//
// Owned by its transport; loop thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>

#include "genie/common/units.h"
#include "genie/net/transport.h"

namespace genie::net {

class ProbeRttWatch {
 public:
  static constexpr TimeNs kInterval = 50 * kNsPerMs;
  static constexpr int64_t kBacklogBytes = 16 << 10;

  // Socket `fd`'s bbr mode: true in PROBE_RTT, false in another; nullopt when its congestion
  // control is not bbr (one call: TCP_CC_INFO answers bbr's 20 bytes for bbr only).
  static std::optional<bool> InProbeRtt(int fd);
  // Bytes in socket `fd`'s send queue, sent and not acknowledged or not yet sent (0: unknown).
  static int64_t Backlog(int fd);

  // One sample of socket `key` at `now`, with `backlog` bytes in its send queue: an episode
  // begins when it enters PROBE_RTT and ends when a later sample finds it out (or Forget());
  // it counts, from its beginning, once a sample finds the connection busy in it.
  void Sample(int key, bool in_probe_rtt, int64_t backlog, TimeNs now);
  // Socket `key` closed at `now`: its episode, if any, ends.
  void Forget(int key, TimeNs now);
  // Since the first sample, of the episodes that count: how many began, the time spent in
  // them summed over sockets (one still open counts up to `now`), and when the latest began.
  ProbeRttTotals Totals(TimeNs now) const;

 private:
  struct Episode {
    TimeNs since = 0;
    bool busy = false;
  };
  std::unordered_map<int, Episode> open_;  // socket in an episode -> it
  ProbeRttTotals closed_;                  // episodes counted; time of the ended ones
};

}  // namespace genie::net
