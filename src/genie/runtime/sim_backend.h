// SimBackend: every rank of a workload in one process on one virtual clock and one simulated
// network. ForRank(r) hands out rank r's view, a Backend, so the Executor and the
// CollectiveRunner run unchanged on simulated time; Run() drains the event queue.
//
// Semantics (ASTRA-sim's analytical frontend):
//  - Now() is the shared virtual time in ns; After(d, fn) runs fn d ns later.
//  - Send starts the transfer at once on the network model; its `done` runs when the message
//    has been delivered to the receiver (ASTRA-sim fires the send handler on arrival, not when
//    the last byte leaves the sender).
//  - Recv matches sends by (src, dst, tag) in posting order (the k-th send of a triple meets the
//    k-th receive). A message that arrives before its Recv is held; that Recv's `done` is then
//    scheduled at the current time. When the Recv was already posted, the send's and the
//    receive's `done` run in that order in the arrival event.
//  - Payloads are copied when both sides give buffers (Message::data / Message::into), so
//    collective results can be verified in simulation too.
//  - The simulation fails (status() not OK, Run() returns early, nothing more runs) when a
//    receive's size differs from its send's (the ranks' traces disagree, as a real run would
//    refuse) and when simulated time would overflow (a delay past 2^63-1 ns). failed_ranks()
//    names the ranks involved so that the caller can say what they were running.
// Owns the queue, topology and network model; all methods and callbacks run on the thread that
// calls Run().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/slot_pool.h"
#include "genie/common/status.h"
#include "genie/config/network_config.h"
#include "genie/runtime/backend.h"
#include "genie/runtime/compact_chunk.h"
#include "genie/sim/event_queue.h"
#include "genie/sim/network_model.h"
#include "genie/sim/topology.h"

namespace genie::runtime {

struct SimCounters {
  uint64_t messages_sent = 0;
  Bytes bytes_sent = 0;
  uint64_t messages_delivered = 0;
  uint64_t recvs_posted = 0;
  uint64_t recvs_completed = 0;
  uint64_t events = 0;           // events the queue has run
};

struct RankCounters {
  uint64_t messages_sent = 0;
  Bytes bytes_sent = 0;
  uint64_t messages_received = 0;
  Bytes bytes_received = 0;
};

class SimBackend {
 public:
  // `world_size` ranks (0 = every NPU of the network; more than that is an error).
  static Result<std::unique_ptr<SimBackend>> Create(const config::NetworkConfig& network,
                                                    sim::NetworkModelKind model,
                                                    int world_size = 0);
  ~SimBackend();
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  Backend& ForRank(int rank);
  int world_size() const { return static_cast<int>(ranks_.size()); }
  // Runs events until none is left or the simulation fails; returns how many ran in this call.
  uint64_t Run() { return queue_.Run(); }
  TimeNs Now() const { return queue_.Now(); }
  // OK, or why the simulation stopped (an input error: sizes that disagree, time overflow).
  const Status& status() const { return queue_.status(); }
  // The ranks the failure concerns (sender and receiver, or the rank whose delay overflowed);
  // empty when a message overflowed at a later hop of its route.
  const std::vector<int>& failed_ranks() const { return failed_ranks_; }

  sim::EventQueue& queue() { return queue_; }
  ScheduleCache& schedule_cache() { return schedule_cache_; }
  const sim::Topology& topology() const { return topology_; }
  sim::NetworkModel& network() { return *network_; }
  sim::NetworkModelKind model_kind() const { return network_->kind(); }

  SimCounters counters() const;
  const RankCounters& rank_counters(int rank) const { return rank_counters_[rank]; }
  // OK when every send was received and every receive matched; otherwise an error listing
  // (up to 20 of) the unmatched pairs — a deadlock or a trace whose SEND/RECV disagree.
  Status CheckAllMatched() const;
  // Counters, per-rank traffic and (aware and flow models) the busiest links, for result files
  // (flow: busy_ns = time with a flow on it, max_queue = most flows sharing it at once - 1).
  nlohmann::json StatsJson(size_t max_links = 16) const;

 private:
  class RankView;
  struct Key {
    int src;
    int dst;
    uint64_t tag;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.src)) << 32) |
                   static_cast<uint32_t>(k.dst);
      h ^= k.tag + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      return std::hash<uint64_t>()(h);
    }
  };
  // A completion: handler->OnEvent(arg), or nothing. Closures are kept by the queue
  // (EventQueue::Hold) and come back as such a pair.
  struct Done {
    EventHandler* handler = nullptr;
    uint64_t arg = 0;
  };
  // The k-th send and the k-th receive of one (src, dst, tag).
  struct Slot {
    bool sent = false, posted = false, arrived = false, done = false;
    Bytes send_bytes = 0, recv_bytes = 0;
    const void* data = nullptr;
    void* into = nullptr;
    std::vector<uint8_t> held;  // payload of a message that arrived before its Recv
    Done send_done, recv_done;
  };
  // Usually holds one slot (tags are unique per step), so a vector with a moving head
  // rather than a deque (whose first node alone is 512 bytes).
  struct Channel {
    uint64_t base = 0;  // sequence number of slots[head]
    uint64_t next_send = 0, next_recv = 0;
    size_t head = 0;
    std::vector<Slot> slots;
  };
  // (src, dst, tag) -> Channel: open addressing, linear probing, backward-shift deletion over
  // 24-byte (key, index) entries, the channels in a pool beside them. Tags are unique per step,
  // so nearly every message opens a channel and closes it on delivery; here that allocates
  // nothing (a closed channel keeps its slot vector for the next one) and the probed table
  // stays small enough for the cache.
  class ChannelTable {
   public:
    Channel& Get(const Key& key) { return channels_[GetIndex(key)]; }
    // The index of key's channel (opened empty when there is none): stable while it is open.
    uint32_t GetIndex(const Key& key);
    Channel& At(uint32_t index) { return channels_[index]; }
    void Erase(const Key& key);  // the channel's reference may be reused from here on
    size_t size() const { return size_; }
    template <typename F>
    void ForEach(F&& f) const {
      for (const Entry& e : entries_) {
        if (e.index != kEmpty) f(e.key, channels_[e.index]);
      }
    }

   private:
    static constexpr uint32_t kEmpty = 0xffffffffu;
    struct Entry {
      Key key{};
      uint32_t index = kEmpty;  // into channels_
    };
    size_t Home(const Key& key) const {
      return static_cast<size_t>((KeyHash()(key) * 0x9e3779b97f4a7c15ULL) >> shift_);
    }
    void Grow();
    std::vector<Entry> entries_;
    int shift_ = 64;
    size_t size_ = 0;
    std::vector<Channel> channels_;  // a channel's index never changes while it is open
    std::vector<uint32_t> free_;
  };

  SimBackend(sim::Topology topology, sim::NetworkModelKind model, int world_size);
  void Send(int rank, const Message& msg, Done done);
  void Recv(int rank, const Message& msg, Done done);
  Done Hold(Callback fn);
  void Delivered(const Key& key, uint64_t seq, uint32_t channel);
  // Deliveries come back from the network model as (handler, token) events, token = an index
  // into in_flight_: no closure per message. The channel stays open while its message is in
  // flight (its slot is not done), so its index finds it without a lookup.
  struct InFlight {
    Key key;
    uint64_t seq;
    uint32_t channel;
  };
  class Delivery final : public sim::EventQueue::Handler {
   public:
    explicit Delivery(SimBackend* sim) : sim_(sim) {}
    void OnEvent(uint64_t token) override;

   private:
    SimBackend* sim_;
  };
  Slot& SlotAt(Channel& ch, uint64_t seq);
  void Retire(const Key& key, Channel& ch);  // drops finished slots, and the channel if empty
  // Fails the simulation when a receive's size differs from its send's; true if it did.
  bool SizeMismatch(const Key& key, Bytes sent, Bytes posted);
  void Fail(Status status, std::vector<int> ranks);

  sim::EventQueue queue_;
  sim::Topology topology_;
  std::unique_ptr<sim::NetworkModel> network_;
  std::vector<std::unique_ptr<RankView>> ranks_;
  ChannelTable channels_;
  Delivery delivery_{this};
  SlotPool<InFlight> in_flight_;
  SimCounters counters_;
  std::vector<RankCounters> rank_counters_;
  std::vector<int> failed_ranks_;
  ScheduleCache schedule_cache_;
};

}  // namespace genie::runtime
