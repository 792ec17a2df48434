// DelayQueue: added delay and jitter on a link without netem (this kernel has none). An
// iptables rule sends a link's packets to NFQUEUE `queue_num`, e.g. in the receiving host's
// namespace
//   iptables -t mangle -A PREROUTING -i eth0 -j NFQUEUE --queue-num N --queue-bypass
// and this helper, bound to that queue in the same namespace, holds each packet and lets it go
// on (NF_ACCEPT) `delay ± jitter` after it arrived. --queue-bypass makes packets flow undelayed
// whenever no helper is bound (before it starts, after it exits or dies). Hold packets where
// they arrive (the receiver's PREROUTING, or a switch's FORWARD), not on the sender's OUTPUT,
// where holding them throttles the sending socket instead of delaying the link.
//
// What it does and does not do:
// - Jitter is uniform in [delay - jitter, delay + jitter] (clamped at 0), drawn from `seed`.
// - Release times are kept monotone: a packet never leaves before one that arrived earlier, so
//   TCP sees no reordering (as netem does with a rate, unlike netem's plain jitter). A packet
//   whose draw would overtake the one before it leaves right after it instead. Packets further
//   apart than 2 x jitter (pings, small messages) thus get the full uniform spread; a dense flow
//   (bulk TCP) mostly waits behind a late draw, so its delay leans towards delay + jitter.
// - Packets are copied to user space as metadata only (NFQNL_COPY_META: no payload), GSO
//   packets are queued whole (NFQA_CFG_F_GSO, so a 64 KB TCP burst is one verdict), and
//   releases are batched: since releases follow arrival order, one verdict accepts every held
//   packet up to an id (nfq_set_verdict_batch).
// - The kernel-side queue holds `max_packets`; when it is full, or the helper cannot keep up
//   with the socket, packets pass undelayed rather than being dropped (NFQA_CFG_F_FAIL_OPEN,
//   where the kernel has it).
// - Timing: a packet's delay counts from the kernel's receive timestamp (switched on by a
//   socket with SO_TIMESTAMPNS while the helper runs), so the time the helper takes to read it
//   does not add up; release is a timerfd with 1 ns timer slack armed for the oldest held
//   packet, at SCHED_FIFO when allowed. The error is then the wake-up latency (DelayQueueStats
//   says how much): measured on a 2-core VM busy with other builds, p50 60-130 µs late, p99
//   0.3-2 ms (up to 15 ms when the VM itself stalls); tens of µs when the machine is idle.
// - Throughput: at 1 Gbit/s (tbf) a TCP flow gets the same goodput through a 5 or 20 ms delay
//   as without (~1.8k verdicts/s: NFQUEUE sees GSO packets of ~60 KB); unshaped, 3 Gbit/s
//   with 5 ms. With GSO off (every packet MTU-sized) the limit is the machine: ~10k packets/s
//   here, 60-70 % of a core, most of it the kernel's own receive path run in the verdict call.
// - On SIGTERM or SIGINT it accepts everything held, then lets new packets pass (a zero-length
//   fail-open queue), accepts what was queued meanwhile, unbinds and returns 0: nothing is
//   dropped. Killed with SIGKILL, the kernel drops what it held (TCP
//   retransmits it) and --queue-bypass lets the rest through.
//
// Ownership and threads: RunDelayQueue owns everything it opens and runs on the calling thread
// until a signal; it blocks SIGTERM and SIGINT in that thread (call it from a process's main
// thread, e.g. `genie netdelay`). ReleaseSchedule is a plain value type, one owner.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <random>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::testbed {

struct DelayQueueOptions {
  int queue_num = 0;                // NFQUEUE number, 0 .. 65535
  TimeNs delay = 0;                 // added to every packet
  TimeNs jitter = 0;                // uniform ± around `delay`
  uint64_t seed = 1;                // of the jitter draws
  uint32_t max_packets = 1u << 16;  // kernel queue length (nfq_set_queue_maxlen)
  // Run as SCHED_FIFO (priority 10) while bound, so that a busy machine delays the wake-ups
  // less (here, under load: wake-up p99 1.5 ms instead of 6 ms). Where the kernel refuses, it
  // runs at normal priority and says so.
  bool realtime = true;
};

// Refuses a queue number out of range, a negative delay or jitter, delay + jitter past an hour
// (a typo, not a link) and an empty queue.
Status ValidateDelayQueueOptions(const DelayQueueOptions& options);

// When each held packet leaves: the part of the helper that does not touch the kernel, so it can
// be tested alone. Packets are added in arrival order with their NFQUEUE ids; because release
// times are monotone, the packets due at any moment are a prefix of the held ones.
class ReleaseSchedule {
 public:
  ReleaseSchedule(TimeNs delay, TimeNs jitter, uint64_t seed);

  // Holds packet `id` that arrived at `arrival` (CLOCK_MONOTONIC ns); returns its release time:
  // arrival + delay ± jitter, but not before the packet added before it.
  TimeNs Add(uint32_t id, TimeNs arrival);

  bool empty() const { return held_.empty(); }
  size_t size() const { return held_.size(); }
  // The release time of the oldest held packet. Requires !empty().
  TimeNs NextRelease() const { return held_.front().release; }

  struct Released {
    uint32_t last_id = 0;  // every held packet up to this one (in arrival order) leaves
    uint32_t count = 0;    // how many
    TimeNs max_late = 0;   // now - the earliest release time among them (how late we are)
  };
  // Removes the packets due at `now` (release <= now); nullopt when none is due.
  // `on_late`, if set, is called with (now - release) for each of them (for statistics).
  template <typename OnLate>
  std::optional<Released> PopDue(TimeNs now, OnLate&& on_late);
  std::optional<Released> PopDue(TimeNs now) {
    return PopDue(now, [](TimeNs) {});
  }
  // Removes every held packet, due or not (on shutdown).
  std::optional<Released> PopAll();

 private:
  struct Held {
    uint32_t id;
    TimeNs release;
  };
  TimeNs delay_;
  TimeNs jitter_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<TimeNs> draw_;
  TimeNs last_release_ = 0;
  std::deque<Held> held_;
};

// What a run did, printed when it ends (and useful to tests).
struct DelayQueueStats {
  uint64_t packets = 0;      // verdicts given for packets read from the queue
  uint64_t gso_packets = 0;  // of which GSO (several segments in one skb)
  uint64_t batches = 0;      // verdict messages sent
  uint64_t max_held = 0;     // most packets held at once
  uint64_t truncated = 0;    // messages cut short by the socket (released with the next batch)
  TimeNs late_p50 = 0;       // how late packets left after their release time (wake-up error)
  TimeNs late_p99 = 0;
  TimeNs late_max = 0;
  uint64_t kernel_stamped = 0;  // packets timed from the kernel's receive stamp
  TimeNs read_lag_p50 = 0;      // how long after that stamp the helper read them
  TimeNs read_lag_p99 = 0;
  bool kernel_stamps = false;  // receive timestamps could be switched on
  bool bound = false;          // the queue was bound (packets could be delayed)
  bool realtime = false;       // ran as SCHED_FIFO
  bool fail_open = false;      // the kernel lets packets pass when the queue is full
};

// Binds NFQUEUE `options.queue_num` in the calling thread's network namespace and delays every
// packet it receives until SIGTERM or SIGINT; then accepts everything still held, unbinds and
// returns 0. Errors (bad options: 2; cannot bind, e.g. no CAP_NET_ADMIN or the queue is taken:
// 1) are printed to stderr naming the queue and what to do. Progress lines go to stderr too:
// "netdelay: queue N bound ..." once packets can be delayed, and a summary at the end.
int RunDelayQueue(const DelayQueueOptions& options);

// Same, returning the error and filling `stats` (for tests and callers with their own output).
Status RunDelayQueue(const DelayQueueOptions& options, DelayQueueStats* stats);

// ---- implementation ----

template <typename OnLate>
std::optional<ReleaseSchedule::Released> ReleaseSchedule::PopDue(TimeNs now, OnLate&& on_late) {
  if (held_.empty() || held_.front().release > now) return std::nullopt;
  Released r;
  r.max_late = now - held_.front().release;
  while (!held_.empty() && held_.front().release <= now) {
    on_late(now - held_.front().release);
    r.last_id = held_.front().id;
    ++r.count;
    held_.pop_front();
  }
  return r;
}

}  // namespace genie::testbed
