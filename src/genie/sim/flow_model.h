// FlowModel: a flow-level network, what a real cut-through fabric under TCP does to first order
// (genie's model, not ASTRA-sim's). Every message in flight is a flow on its path of links
// (Topology::Route: the sender's link into the switch and the switch's port to the receiver, or
// the ring/direct links; across dimensions, the links of each dimension it crosses). Each
// link's rate (bandwidth x goodput of its dimension) is shared max-min fairly among the flows
// crossing it — progressive filling: the most constrained link fixes its flows' equal share,
// that share is taken off their other links, repeat — and recomputed whenever a flow starts or
// ends, but only over the connected component (links linked by shared flows) the flow touches,
// so unrelated traffic costs nothing. The starts and ends of one ns are settled together, in
// one recomputation run as an event at that ns (a collective's messages start together), so
// k flows starting at once cost one pass, not k. Switching is cut-through: the last byte arrives
// the path's latency (sum of its links' latencies) after it leaves the bottleneck, paid once per
// message, plus the message's software overhead (the largest `message_overhead` of the dimensions
// it crosses; it delays delivery, it does not occupy a link).
//
// Leaf-spine (Topology::FlowRoute): a message between leaves is split evenly over the S
// spines, S sub-flows (bytes / S each) sharing like any flows, delivered when the last of them
// is — ECMP with the hash unknown, its expectation of where the bytes go. Not of how fast: a
// connection rides one spine, so the sub-flows of a message together get at most what one
// path's slowest link gives (each capped at 1/S of it; the water-filling takes a cap as a link
// of the flow's own). Sub-flows count as flows in max_queue.
// A pair of hosts whose spine is known (network.yml `ecmp_routes`) has one path, on that spine;
// so has a connection (src, dst, channel) whose spine is (`ecmp_connections`).
//
// Measured message times (network.yml `message_times`, a testbed's calibration): a message
// crossing dimension 0 costs Topology::MeasuredCost(): alone on its path it takes the measured
// time of its size — fewer bytes on its links when that time is shorter than its bytes at the
// rate (a shaper's burst), else its bytes plus a delay that occupies no link (software on busy
// CPUs) — while sharing stays max-min fair.
//
// Shaped links (network.yml `burst`: a token-bucket shaper such as a testbed's tbf): each such
// link has a bucket of `burst` bytes (as payload: x goodput), full at start, that fills at the
// link's rate while no flow crosses it. A flow whose every link is shaped lets out at once the
// bytes the emptiest of its links' buckets holds (taken from each), the rest at its fair share:
// a shaper passes a burst at the speed of what is behind it, then holds the link to its rate.
// A link carrying flows does not refill (kept busy, it has no tokens to spare). No message on
// a shaped path is delivered sooner than `burst_message_times` says its size takes with the
// buckets full (the hosts' software); that table replaces `message_times` there, as the
// bucket itself gives what a ring step steadily takes (its bytes at the rate, the software
// hidden while the buckets refill). set_idle_since() starts a rank's buckets part full, and
// on a leaf-spine its leaf's spine links' as of the latest of its hosts. A host's loopback
// between its ranks (set_loopback_dimension) does not count: a message from one host's rank to
// another host's rank in another slot reaches it there (host slots route it through the
// destination host's loopback), yet it is shaped as the hosts' links shape it, as on a testbed.
//
// One machine's cores (set_machine_bandwidth; network.yml `machine_bandwidth`): a testbed's
// hosts are namespaces of one machine, whose cores copy every byte TCP moves, so every message
// also crosses one machine-wide link of that rate (loopback bytes a second; its own index past
// the topology's links, in no link_stats). A message within a host takes 1 of its bytes per
// byte, one between hosts kFabricByteCost; its flows share it at equal rates. Idle cores leave
// every flow as without it; eight hosts' loopbacks at once share two cores.
//
// bbr's PROBE_RTT (set_probe_rtt; network.yml `probe_rtt`): bbr re-measures a path's round trip
// when its estimate is 10 s old, holding the connection to 4 packets in flight for at least
// 200 ms. So every connection (src, dst, channel), `interval` after it opened (set_opened_at,
// by its sender's npu, whose bbr it is; default 0) and then `interval` after each probe ended,
// probes for `duration` from its first byte on the wire at or after that time (an idle one
// probes when it next sends): its flows together move at most the probe's rate meanwhile
// (split over its sub-flows), a cap like a split message's; within a host (loopback links only)
// 4 packets of 64 KB per round trip hold no one back. The connections of a run open
// together, so they probe together, as measured (net/tcp/probe_rtt_watch.h).
//
// Chunks: the messages of one collective chunk in flight together (Transmit's `flow` id, the
// same on every rank) are paced to end with the slowest of them: a message that would end
// sooner is capped at its remaining bytes over the time the slowest has left, and what it does
// not take goes to the other flows on its links now. A chunk's step ends when its slowest
// message does, so the early ones gain nothing by ending early. On a real fabric their
// bytes queue where they share a link, and a flow held by another link keeps its rate while
// its own standing queue there drains; a fluid model has no queues, so without pacing the
// capacity an early message takes during its burst would be lost to that flow (measured:
// docs/notes/2026-12-04-prediction-accuracy-what-moved-ratios.md, "The leaf-spine's
// moe_dp2_ep4"). A message with another queued behind it on its connection is not paced (the
// one behind would wait for it), nor one whose pace no other flow gains by (it would only hold
// its links longer, and a shaped link's bucket refills only while the link is idle: a star's
// ring steps, each alone on its links, with buckets part full after unequal idle times, were
// predicted 7 % slow with that pacing).
//
// Connections: a real transport carries a pair's messages on one connection per channel (TCP:
// one socket; its frames leave in the order they were queued). So messages of one connection
// (src, dst, channel) go one at a time, in order: the next starts when the one before has left
// the bottleneck, and none is delivered before the one before it. Concurrent messages of one
// pair, such as the chunks of several collectives in flight, end one after another as on the
// wire, instead of all together at a fair share; a pair's channels are flows side by side. (The
// `flow` id of Transmit is not needed: a connection serializes whatever it carries.)
//
// Rounding: rates and remaining bytes are doubles; a flow ends at the first whole ns at or
// after its exact end (never faster than the link), and is delivered at the first whole ns at
// or after exact end + latency + overhead.
// Owned by SimBackend; single-threaded like its queue.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "genie/sim/network_model.h"

namespace genie::sim {

class FlowModel final : public NetworkModel {
 public:
  FlowModel(const Topology* topology, EventQueue* queue);
  NetworkModelKind kind() const override { return NetworkModelKind::kFlow; }
  void Transmit(int src, int dst, Bytes bytes, uint64_t flow, uint16_t channel,
                std::function<void()> delivered) override;
  // Per link: messages, bytes, busy_ns = time with at least one flow, max_queue = most flows
  // at once minus one (the others sharing it); queued_ns is not meaningful here (0).
  std::vector<LinkStats> link_stats() const override;
  void set_idle_since(int npu, double since) override;
  void set_loopback_dimension(int dim) override;
  void set_machine_bandwidth(double gbps) override;
  void set_probe_rtt(double interval_ns, double duration_ns, double gbps) override;
  void set_opened_at(int npu, double at) override;

  // What a byte between hosts (veths, a bridge, tbf) costs a testbed machine's cores, in bytes
  // over a loopback: one TCP stream moved 1.4 GB/s between namespaces and 2.15 GB/s over a
  // namespace's loopback, 2.7 and 4.3 GB/s in all with both cores busy (2026-12-07).
  static constexpr double kFabricByteCost = 1.5;

  // Work counters (bench, tests): rate recomputations and the flows they covered in total.
  uint64_t recomputations() const { return recomputations_; }
  uint64_t flows_recomputed() const { return flows_recomputed_; }
  size_t active_flows() const { return active_; }

 private:
  struct Link {
    double capacity = 0;     // bytes/ns this link gives to transfers (bandwidth x goodput)
    double latency_ns = 0;   // of its dimension
    double overhead_ns = 0;  // message_overhead of its dimension
    std::vector<int> flows;  // active flows crossing it
    uint32_t mark = 0;       // epoch of the last component walk that reached it
    // Scratch of one water-filling pass.
    double left = 0;        // capacity not yet given to frozen flows
    uint32_t unfrozen = 0;  // flows on it not yet given a rate
    double weight = 0;      // their weights (the machine link's: machine_weight; else 1 each)
    // Statistics.
    uint64_t messages = 0;
    Bytes bytes = 0;
    TimeNs busy_ns = 0;
    TimeNs busy_since = 0;
    uint32_t max_flows = 0;
    // Shaper (network.yml `burst`): bucket size and bytes in it (payload bytes; 0: none), and
    // when it last became idle (it fills from then on).
    double bucket = 0;
    double tokens = 0;
    double idle_since = 0;
    bool idle_set = false;  // set_idle_since() has set idle_since (by a rank sharing it)
    bool loopback = false;  // set_loopback_dimension(): neither shaped nor unshaped
  };
  struct Flow {
    std::vector<int> route;
    std::vector<uint32_t> slot;  // index of this flow in links_[route[i]].flows
    double remaining = 0;        // bytes still to leave the bottleneck at `updated`
    double rate = 0;             // bytes/ns
    double new_rate = 0;         // scratch of one water-filling pass
    double unpaced_rate = 0;     // scratch: new_rate before pacing
    double end = 0;              // exact time the last byte leaves, at the current rate
    TimeNs updated = 0;
    double start_exact = 0;   // when its bytes may start leaving (<= the ns it was started at)
    double tail_ns = 0;       // latency of the path + software overhead
    double floor_at = 0;      // no delivery before (a shaped path's burst_message_times)
    double cap = 0;           // most bytes/ns it may get (a split message's sub-flow); 0: none
    int paths = 1;            // sub-flows of its message (it gets 1/paths of a probe's rate)
    bool within_host = false;  // every link a host's loopback (no probe caps it: lo's MSS is 64 KB)
    double machine_weight = 1;  // bytes of the machine link's per byte (kFabricByteCost)
    double pace = 0;          // most bytes/ns to end with its chunk's slowest message; 0: none
    uint64_t chunk = 0;       // Transmit's flow id (0: none)
    uint32_t chunk_slot = 0;  // index of this flow in chunks_[chunk].flows
    uint64_t generation = 0;  // matches the one scheduled end event; others are stale
    uint32_t mark = 0;
    uint32_t frozen = 0;  // Fill() pass that fixed its rate
    bool scheduled = false;
    int connection = 0;  // index in connections_ (its npus, for errors)
    Bytes bytes = 0;
    std::function<void()> delivered;
  };
  // The flows of one chunk in flight, and how many of them are paced.
  struct Chunk {
    std::vector<int> flows;
    int paced = 0;
  };
  // One (src, dst, channel): the message on the wire (its sub-flows still sending) and the
  // messages queued behind it.
  struct Connection {
    struct Queued {
      Bytes bytes;
      std::function<void()> delivered;
      uint64_t chunk;  // Transmit's flow id (0: none)
    };
    int src = 0, dst = 0;
    int channel = 0;           // its spine may be known (network.yml ecmp_connections)
    int sending = 0;           // sub-flows of the current message not yet off the bottleneck
    TimeNs last_delivery = 0;  // of its latest message: none is delivered before
    std::deque<Queued> queued;
    // bbr's PROBE_RTT: when the next probe is due (-1: not yet known), until when the current
    // one lasts, and whether an event checks it at its due time.
    double probe_due = -1;
    double probe_until = -1;
    bool probe_check = false;
  };

  int ConnectionFor(int src, int dst, uint16_t channel);
  // Starts the messages queued on connection `c` while it is free (one that ends at once, such
  // as a zero-byte one, frees it again), the first at exact time `at` (<= now).
  void Pump(int c, double at);
  // bbr's PROBE_RTT of connection `c`, which puts a message on the wire at `at`: begins a
  // probe when one is due, else checks again at the due time.
  void ProbeDue(int c, double at);
  void BeginProbe(int c, double at);
  // The most bytes/ns flow `f` may get now: its own cap and its connection's probe (0: none).
  double CapOf(const Flow& f) const;
  // Recomputes the rates of connection `c`'s flows on the wire (its probe began or ended).
  void TouchConnection(int c);
  // Starts one message of connection `c`: one flow, or one per spine when the path is split.
  void StartMessage(int c, double at, Connection::Queued message);
  // Starts one flow of `bytes` (of a message of `message` bytes) on path `path` of the
  // connection. `counted`: the route of a sibling sub-flow already counted in the links' message
  // statistics (nullptr: none).
  void Start(int c, double at, int path, int paths, Bytes bytes, Bytes message, uint64_t chunk,
             std::function<void()> delivered, const std::vector<int>* counted);
  // Marks `links` as touched by a start or end now; schedules one Settle() for this ns.
  void Touch(const std::vector<int>& links);
  void Settle();
  // Recomputes the max-min fair rates of every flow connected to `seeds` (links) and
  // reschedules the end of each flow whose rate changed.
  void Recompute(const std::vector<int>& seeds);
  // One water-filling pass over the component (comp_links_, comp_flows_): sets new_rate.
  void Fill();
  // After Fill(): paces the component's chunks ("Chunks" above) and fills again.
  void PaceChunks(TimeNs now);
  // Paces the component's flows that would end before their chunk's slowest message (sets
  // pace); true if any was.
  bool Pace(TimeNs now);
  void SetPace(int f, double pace);
  // Schedules the end event of flow f, whose last byte leaves at exact time `end`.
  void ScheduleEnd(int f, double end);
  void Ended(int f, uint64_t generation);
  // Schedules delivery `tail_ns` after the exact time `end` (>= now); fails on overflow.
  void Deliver(int f, double end);
  void Release(int f);
  Status Overflow(const Flow& flow) const;

  const Topology* topology_;
  EventQueue* queue_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<int> free_flows_;
  std::vector<Connection> connections_;
  std::unordered_map<uint64_t, int> connection_index_;  // by (src, dst, channel)
  std::unordered_map<uint64_t, Chunk> chunks_;          // by Transmit's flow id, in flight
  int machine_loopback_ = -1;  // the machine-wide loopback link's index (-1: none)
  // set_probe_rtt (interval 0: no probes); set_opened_at, by npu (absent: 0).
  double probe_interval_ = 0, probe_duration_ = 0, probe_rate_ = 0;
  std::unordered_map<int, double> opened_at_;
  uint32_t epoch_ = 0;
  uint32_t pass_ = 0;  // of Fill(), for Flow::frozen
  uint64_t next_generation_ = 0;
  size_t active_ = 0;
  uint64_t recomputations_ = 0;
  uint64_t flows_recomputed_ = 0;
  // Scratch, kept to avoid allocation per recomputation.
  std::vector<int> pending_;      // links touched since the last Settle()
  std::vector<int> first_route_;  // of a split message's first sub-flow
  int last_started_ = -1;         // flow index Start() used
  bool settle_scheduled_ = false;
  std::vector<int> stack_, comp_links_, comp_flows_, seeds_;
  struct Share {
    double share;
    int link;
  };
  std::vector<Share> heap_;
  std::unordered_map<uint64_t, double> chunk_end_;  // scratch of Pace()
};

}  // namespace genie::sim
