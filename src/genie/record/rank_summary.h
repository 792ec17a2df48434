// RankSummary: one rank's totals for one iteration, the figures ASTRA-sim prints per rank
// ("sys[r] finished, T cycles, exposed communication E cycles."). Produced by the executor when
// a rank finishes an iteration (SummarizeRank in busy_time.h computes it from OpEvents).
// Plain value type; any thread.
#pragma once

#include "genie/common/units.h"

namespace genie::record {

struct RankSummary {
  int rank = 0;
  int iteration = 0;           // negative = warm-up
  TimeNs start = 0;
  TimeNs finish = 0;
  TimeNs compute_ns = 0;       // total GPU compute time (COMP nodes that are not CPU ops)
  TimeNs comm_ns = 0;          // time with at least one communication op in flight (a union)
  // finish - start - compute_ns (ASTRA-sim's definition), less stall_ns.
  TimeNs exposed_comm_ns = 0;
  // Compute faults (compute/faulted_compute.h): how much longer than the trace (or roofline)
  // says compute_ns is (negative if a fault made it faster), and how long the rank stalled at
  // the iteration's start. 0 without faults.
  TimeNs compute_excess_ns = 0;
  TimeNs stall_ns = 0;
  // Real runs: how long the rank's thread was ready to run but waited for a core during the
  // iteration (record/cpu_wait.h) — genie's own machine in the measured time. 0 in simulation.
  TimeNs cpu_wait_ns = 0;
  // Real runs: retransmission timeouts the rank's host's TCP counted during the iteration
  // (record/tcp_timeouts.h), and the network namespace that counter is of (ranks on one host
  // read the same one); both 0 when none (or not read).
  int64_t tcp_timeouts = 0;
  int64_t host_id = 0;
  // Real runs over TCP with bbr: PROBE_RTT episodes of the rank's busy connections counted
  // during the iteration (first seen busy in it), and the time its connections spent in them,
  // summed (net/tcp/probe_rtt_watch.h: ~200 ms each, every ~10 s of a connection's life).
  int64_t probe_rtt_episodes = 0;
  TimeNs probe_rtt_ns = 0;
  // When the latest of those episodes began, from the iteration's start (0 if before it; -1:
  // none).
  TimeNs probe_rtt_at_ns = -1;
};

// What the executor reads of its connections' PROBE_RTT (ExecutorConfig::probe_rtt_counter):
// episodes begun and time spent in them so far, and when the latest began (its clock; -1: none).
struct ProbeRttReading {
  int64_t episodes = 0;
  TimeNs ns = 0;
  TimeNs last_begin = -1;
};

}  // namespace genie::record
