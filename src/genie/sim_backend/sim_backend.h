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

#include "genie/common/check.h"
#include "genie/common/slot_pool.h"
#include "genie/common/status.h"
#include "genie/config/network_config.h"
#include "genie/runtime/backend.h"
#include "genie/runtime/compact_chunk.h"
#include "genie/sim/event_queue.h"
#include "genie/sim/network_model.h"
#include "genie/sim/symmetry.h"
#include "genie/sim/topology.h"

namespace genie::sim_backend {

// The executor's side of the seam this backend implements (runtime/backend.h).
using runtime::Backend;
using runtime::Callback;
using runtime::Message;
using runtime::ScheduleCache;

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
  int world_size() const { return static_cast<int>(rank_counters_.size()); }
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

  // Symmetry reduction (sim/symmetry.h): only `fold`'s representatives run; a message to
  // another rank p is delivered to Rep(p) as sent by the sender's image, and every link is its
  // orbit's representative. Set before the first message; `fold` outlives the backend.
  Status SetFold(const sim::RankFold* fold);
  const sim::RankFold* fold() const { return fold_; }
  // Host slots (sim/host_slots.h): the network is WithHostSlots(h, slots) of a network of
  // `hosts` NPUs; every rank on a host sends on the host's links. Set before the first message;
  // not with SetFold.
  Status ShareHostLinks(int hosts);

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
    // Payload of a message that arrived before its Recv: an index into held_ (kNoPayload: none),
    // so that a slot is plain data, reset by a copy. Beside the flags: 72 bytes in all.
    uint32_t held = kNoPayload;
    Bytes send_bytes = 0, recv_bytes = 0;
    const void* data = nullptr;
    void* into = nullptr;
    Done send_done, recv_done;
  };
  static constexpr uint32_t kNoPayload = 0xffffffffu;
  // A channel's slots from the oldest not retired: the first inline (tags are unique per step,
  // so a channel nearly always holds one, and then its slot is in the channel's own lines), on
  // the heap from the second on until the channel closes. A vector with a moving head rather
  // than a deque (whose first node alone is 512 bytes).
  class Slots {
   public:
    size_t size() const { return spilled_ ? heap_.size() : used_; }
    Slot& operator[](size_t i) { return spilled_ ? heap_[i] : first_; }
    const Slot& operator[](size_t i) const { return spilled_ ? heap_[i] : first_; }
    // Appends default slots up to `n`; may move every slot. Inline when there is nothing to
    // do (every message's slot exists by its second lookup) or the inline slot is taken.
    void GrowTo(size_t n) {
      if (n <= size()) return;
      if (!spilled_ && n == 1) {
        used_ = 1;  // first_ is a default slot while unused
        return;
      }
      Spill(n);
    }
    // Drops the first `n` slots (done and reset).
    void EraseFront(size_t n);
    // Empty, back to inline; a heap vector keeps its capacity for the next channel. Inline:
    // every message's channel closes.
    void Clear() {
      if (spilled_) {
        heap_.clear();  // keeps the capacity
        spilled_ = false;
      } else if (used_ == 1) {
        first_ = Slot();
      }
      used_ = 0;
    }

   private:
    void Spill(size_t n);  // GrowTo past the inline slot
    // size() and operator[] read these first: they lead, so that with the inline slot they
    // fill a channel's first two cache lines and the heap vector (rarely used) the third.
    bool spilled_ = false;
    uint8_t used_ = 0;  // 0 or 1 while inline
    Slot first_;
    std::vector<Slot> heap_;
  };
  // The key sits in the channel: a home channel (below) is found by comparing src and tag in
  // its own first line, and a delivery finds its channel, and key, by index.
  // Aligned to a cache line: what a message touches (key, counters, the inline slot) is then
  // the channel's first two lines wherever the allocator put the table (unaligned, 160 bytes
  // spanned three or four lines, and which depended on the heap's layout: issue 16, part 6).
  struct alignas(64) Channel {
    int src = -1;
    int dst = -1;
    bool open = false;
    uint64_t tag = 0;
    uint64_t base = 0;  // sequence number of slots[head]
    uint64_t next_send = 0, next_recv = 0;
    size_t head = 0;
    Slots slots;
  };
  static_assert(sizeof(Slot) == 72 && sizeof(Channel) == 192);
  // (src, dst, tag) -> Channel. Each destination rank has a home of kHome channels at fixed
  // indices (dst * kHome + j), matched on (src, tag) by a scan: the channels a round over the
  // ranks opens and closes lie in rank order, so the round walks them in memory order instead
  // of missing the cache on a hash's random position at every message (issue 16, part 5). A
  // rank with more channels open at once (an all-to-all) overflows into an open-addressing
  // table (linear probing, backward-shift deletion) of 24-byte (key, index) entries over a pool
  // beside the homes. Tags are unique per step, so nearly every message opens a channel and
  // closes it on delivery; neither allocates (a closed channel keeps its heap slots' capacity).
  class ChannelTable {
   public:
    static constexpr uint32_t kHome = 2;
    explicit ChannelTable(int ranks) : channels_(size_t{kHome} * ranks), homes_(kHome * ranks) {}
    // The index of key's channel (opened empty when there is none): stable while it is open.
    // Inline for a home channel while the overflow is empty (every message asks twice).
    [[gnu::always_inline]] uint32_t GetIndex(const Key& key) {
      const uint32_t home = static_cast<uint32_t>(key.dst) * kHome;
      for (uint32_t j = home; j < home + kHome; ++j) {
        const Channel& ch = channels_[j];
        if (ch.open && ch.src == key.src && ch.tag == key.tag) return j;
      }
      if (size_ > 0) return FindOrOpen(key);  // key may be in the overflow
      return Open(key);
    }
    Channel& At(uint32_t index) { return channels_[index]; }
    // Closes key's channel, `index`; the channel's reference may be reused from here on.
    // Inline for a home channel (nearly every message closes one).
    [[gnu::always_inline]] void Erase(const Key& key, uint32_t index) {
      Reset(channels_[index]);
      if (index >= homes_ && !entries_.empty()) EraseEntry(key);
    }
    template <typename F>
    void ForEach(F&& f) const {
      for (uint32_t i = 0; i < homes_; ++i) {
        const Channel& ch = channels_[i];
        if (ch.open) f(Key{ch.src, static_cast<int>(i / kHome), ch.tag}, ch);
      }
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
    static void Reset(Channel& ch) {
      ch.open = false;
      ch.base = ch.next_send = ch.next_recv = 0;
      ch.head = 0;
      ch.slots.Clear();
    }
    // Opens key's channel (absent from the table) in a free home of key.dst, else in the
    // overflow.
    [[gnu::always_inline]] uint32_t Open(const Key& key) {
      const uint32_t home = static_cast<uint32_t>(key.dst) * kHome;
      for (uint32_t j = home; j < home + kHome; ++j) {
        Channel& ch = channels_[j];
        if (!ch.open) {
          ch.open = true;
          ch.src = key.src;
          ch.dst = key.dst;
          ch.tag = key.tag;
          return j;
        }
      }
      return Overflow(key);
    }
    // GetIndex with a non-empty overflow: key's channel there, else Open.
    uint32_t FindOrOpen(const Key& key);
    uint32_t Overflow(const Key& key);  // opens key's channel in the table
    void EraseEntry(const Key& key);     // drops key's entry from the overflow table
    void Grow();
    std::vector<Channel> channels_;  // homes first; an index never changes while it is open
    uint32_t homes_;
    std::vector<Entry> entries_;  // the overflow's (key, index into channels_)
    int shift_ = 64;
    size_t size_ = 0;  // entries in the overflow
    std::vector<uint32_t> free_;
  };

  SimBackend(sim::Topology topology, sim::NetworkModelKind model, int world_size);
  // Inline into its callers (the relay, the rank views): every message is sent here.
  [[gnu::always_inline]] void Send(int rank, const Message& msg, Done done);
  void Recv(int rank, const Message& msg, Done done);
  // Backend::SendEventAfter: the message waits in pending_, its delays run as the relay's
  // events (the runner is not visited until delivery).
  void SendAfter(int rank, TimeNs first, TimeNs then, const Message& msg, Done done);
  Done Hold(Callback fn);
  [[gnu::always_inline]] void Delivered(const Key& key, uint64_t seq, uint32_t channel);
  // Deliveries come back from the network model as (handler, token) events, token = the
  // channel's index and the low 32 bits of the message's sequence number: no record per message
  // in flight. The channel stays open while its message is in flight (its slot is not done), so
  // the index finds it without a lookup, and it holds the key; the slots from the channel's base
  // on are all in memory, so the low bits name one.
  static uint64_t DeliveryToken(uint32_t channel, uint64_t seq) {
    return (uint64_t{channel} << 32) | static_cast<uint32_t>(seq);
  }
  class Delivery final : public sim::EventQueue::Handler {
   public:
    explicit Delivery(SimBackend* sim) : sim_(sim) {}
    void OnEvent(uint64_t token) override;

   private:
    SimBackend* sim_;
  };
  struct Pending {
    int rank;
    TimeNs then;  // the second delay, 0 once it is running
    Message msg;
    Done done;
  };
  class Relay final : public sim::EventQueue::Handler {
   public:
    explicit Relay(SimBackend* sim) : sim_(sim) {}
    void OnEvent(uint64_t token) override;

   private:
    SimBackend* sim_;
  };
  // Inline: each message looks its slot up three times (Send, Recv, Delivered).
  [[gnu::always_inline]] Slot& SlotAt(Channel& ch, uint64_t seq) {
    GENIE_CHECK(seq >= ch.base) << "slot " << seq << " already retired";
    const size_t i = ch.head + (seq - ch.base);
    ch.slots.GrowTo(i + 1);  // may move other slots: callers hold no other slot reference
    return ch.slots[i];
  }
  // Drops finished slots, and the channel (`index`) if empty. Inline for a channel that lived
  // for one message without a held payload (nearly all: tags are unique per step); its one slot
  // is reset with the channel.
  [[gnu::always_inline]] void Retire(const Key& key, uint32_t index, Channel& ch) {
    if (ch.head == 0 && ch.slots.size() == 1 && ch.slots[0].done &&
        ch.slots[0].held == kNoPayload) {
      channels_.Erase(key, index);
      return;
    }
    RetireSlots(key, index, ch);
  }
  void RetireSlots(const Key& key, uint32_t index, Channel& ch);
  // Fails the simulation when a receive's size differs from its send's; true if it did.
  // The comparison inline (every message asks), the report out of line.
  bool SizeMismatch(const Key& key, Bytes sent, Bytes posted) {
    return sent != posted && ReportSizeMismatch(key, sent, posted);
  }
  bool ReportSizeMismatch(const Key& key, Bytes sent, Bytes posted);
  void Fail(Status status, std::vector<int> ranks);

  sim::EventQueue queue_;
  sim::Topology topology_;
  std::unique_ptr<sim::NetworkModel> network_;
  // Side by side (24 bytes each; never reallocated after the constructor): the runners reach
  // their rank's view at every message, a round over the ranks walks them in memory order.
  std::vector<RankView> ranks_;
  ChannelTable channels_;
  Delivery delivery_{this};
  Relay relay_{this};
  std::vector<std::vector<uint8_t>> held_;  // payloads held for receives not yet posted
  std::vector<uint32_t> free_held_;
  SlotPool<Pending> pending_;
  SimCounters counters_;
  std::vector<RankCounters> rank_counters_;
  std::vector<int> failed_ranks_;
  ScheduleCache schedule_cache_;
  const sim::RankFold* fold_ = nullptr;
};

}  // namespace genie::sim_backend
