// CongestionUnawareModel: ASTRA-sim's congestion-unaware analytical network. A message costs
// floor(hops * latency + bytes / bw) ns on the first dimension where the endpoints' addresses
// differ (Topology::UnawareDelay); different messages never delay one another.
// One exception keeps it physical: the messages of one flow (same src, dst and nonzero flow
// id: the wire pieces, slices and channels, of one chunk of one collective) are one stream of
// bytes, serialized one after the other on a Wire at that dimension's bandwidth. Otherwise
// cutting a message into k slices sent at once would make it k times faster. A message that
// finds its flow idle costs exactly ASTRA-sim's delay. Single-threaded.
// An idle flow is as good as a new one (it is reset when used again), so flows are never erased
// one by one. Idle: its wire is free (a path of at least 1 ns delivers every message at least
// 1 ns after its wire is free, so a free wire is all that a later message can see, and
// arrivals need not be counted: they go straight to their handler); on a shorter path a
// message can arrive in the ns its wire frees, so there it is nothing in flight, counted by
// arrival records. Each source NPU has a home of kHome flows at fixed places
// in the pool (src * kHome + j), matched on (dst, flow) by a scan, an idle one taken for a new
// key: a round over the ranks then walks the flows in memory order instead of missing the
// cache at a hash's random position (issue 16, part 5). A source with more flows in flight at
// once overflows into an open-addressing table of 24-byte (key, index) entries over the rest of
// the pool, rebuilt without the idle flows when it fills up — except those used since the last
// rebuild: a ring's flow is idle between its messages and dropping it only to insert it again
// made the rebuilds 4 % of a 2,048-rank run.
// Counted in-flight messages are 24-byte records, delivered without closures.
#pragma once

#include <vector>

#include "genie/common/slot_pool.h"
#include "genie/sim/network_model.h"
#include "genie/sim/wire.h"

namespace genie::sim {

class CongestionUnawareModel final : public NetworkModel, private EventQueue::Handler {
 public:
  CongestionUnawareModel(const Topology* topology, EventQueue* queue)
      : topology_(topology), queue_(queue) {}
  NetworkModelKind kind() const override { return NetworkModelKind::kCongestionUnaware; }
  void Transmit(int src, int dst, Bytes bytes, uint64_t flow, uint16_t /*channel*/,
                std::function<void()> delivered) override;
  void TransmitTo(int src, int dst, Bytes bytes, uint64_t flow, uint16_t /*channel*/,
                  EventQueue::Handler* handler, uint64_t token) override;

 private:
  // A flow's pair's geometry, worked out once per flow rather than per message (the topology's
  // coordinates cost four integer divisions each): the same values, bit for bit.
  struct Path {
    int dim = kUnknown;       // Topology::FirstDifferingDim(src, dst)
    double latency = 0;       // hops * latency_ns(dim)
    double bytes_per_ns = 0;  // of dim
    bool sized = false;       // last_bytes and last_serialization are set
    Bytes last_bytes = 0;     // the last message's size and its serialization time
    double last_serialization = 0;
  };
  static constexpr int kUnknown = -2;
  struct Flow {
    Wire wire;
    uint64_t in_flight = 0;  // counted flows' messages in flight
    uint64_t id = 0;         // a home flow's key (with dst); overflow flows' is in table_
    int dst = -1;
    bool recent = false;  // used since the table was last rebuilt (overflow flows)
    Path path;            // of (src, dst): kept while the key is
    // Counted: a path shorter than 1 ns, or none worked out yet (nothing was ever in flight).
    bool Counted() const { return path.latency < 1; }
    bool Idle(TimeNs now) const { return Counted() ? in_flight == 0 : wire.IdleAt(now); }
  };
  static constexpr uint32_t kHome = 2;
  struct FlowKey {
    int src;
    int dst;
    uint64_t flow;
    bool operator==(const FlowKey&) const = default;
  };
  struct FlowKeyHash {
    size_t operator()(const FlowKey& k) const {
      uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.src)) << 32) |
                   static_cast<uint32_t>(k.dst);
      h ^= k.flow + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      return std::hash<uint64_t>()(h * 0xff51afd7ed558ccdULL);
    }
  };
  // A message of a flow in flight.
  struct Arrival {
    uint32_t flow;  // into pool_
    EventQueue::Handler* handler;
    uint64_t token;
  };
  static constexpr uint32_t kEmpty = 0xffffffffu;
  struct Entry {
    FlowKey key{};
    uint32_t index = kEmpty;  // into pool_
  };
  void OnEvent(uint64_t arrival) override;
  // The flow of `key` in pool_ (a new one if absent or idle).
  uint32_t FlowFor(const FlowKey& key);
  // The same in the overflow table, when no home flow of key.src is free.
  uint32_t OverflowFlowFor(const FlowKey& key);
  // Rebuilds the table with the flows that are not idle or were used since the last rebuild,
  // sized for them.
  void Rebuild();
  size_t Home(const FlowKey& key) const {
    return static_cast<size_t>((FlowKeyHash()(key) * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  const Topology* topology_;
  EventQueue* queue_;
  std::vector<Entry> table_;
  int shift_ = 64;
  size_t used_ = 0;         // entries in table_
  std::vector<Flow> pool_;  // homes (kHome per NPU) first, then the overflow's flows
  std::vector<uint32_t> free_flows_;
  SlotPool<Arrival> arrivals_;
};

}  // namespace genie::sim
