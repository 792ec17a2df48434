// MessageMatcher: two-sided tag matching shared by transports that lack it in hardware. Holds
// posted receives and unexpected arrivals keyed by (peer, channel, tag), FIFO per key, and a
// pool of reusable buffers for unexpected payloads, so steady state allocates no payload memory.
// MatchArrival/MatchPost are the one place where a receive meets its message, so a size
// mismatch is found and worded the same way whichever came first and whatever the transport.
// It also counts the receives waiting per (peer, channel), which flow control needs.
// Owned by one transport; loop thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <optional>
#include <unordered_map>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

struct MatchKey {
  int peer;
  uint16_t channel;
  uint64_t tag;
  bool operator==(const MatchKey& o) const {
    return peer == o.peer && channel == o.channel && tag == o.tag;
  }
};

struct MatchKeyHash {
  size_t operator()(const MatchKey& k) const {
    uint64_t h = k.tag * 0x9E3779B97F4A7C15ULL;
    h ^= (static_cast<uint64_t>(static_cast<uint32_t>(k.peer)) << 16 | k.channel) + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
    return static_cast<size_t>(h);
  }
};

class MessageMatcher {
 public:
  struct Posted {
    void* into;
    Bytes bytes;
    uint64_t cookie;
  };
  // A reusable payload buffer; not zero-filled (it is always overwritten by a payload).
  // Moving one leaves the source empty (capacity 0 too), so a moved-from buffer can never be
  // pooled and handed out again as "capacity N" with no memory behind it.
  struct Buffer {
    std::unique_ptr<unsigned char[]> data;
    Bytes capacity = 0;
    Buffer() = default;
    Buffer(Buffer&& o) noexcept : data(std::move(o.data)), capacity(std::exchange(o.capacity, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
      data = std::move(o.data);
      capacity = std::exchange(o.capacity, 0);
      return *this;
    }
    unsigned char* get() const { return data.get(); }
  };
  struct Arrived {
    Bytes bytes;
    bool has_data;
    Buffer buf;  // from the pool when has_data
    uint64_t remote_data = 0;
    uint64_t handle = 0;  // the transport's own (fabric: the payload's sequence number)
  };

  void AddPosted(const MatchKey& k, const Posted& p) {
    posted_[k].push_back(p);
    ++posted_per_flow_[FlowOf(k)];
  }
  std::optional<Posted> TakePosted(const MatchKey& k);
  // Receives waiting for messages from `peer` on `channel`, whatever their tag.
  int PostedOn(int peer, uint16_t channel) const;
  void AddArrived(const MatchKey& k, Arrived a) {
    arrived_[k].push_back(std::move(a));
    ++arrived_count_;
  }
  std::optional<Arrived> TakeArrived(const MatchKey& k) {
    auto a = Take(arrived_, k);
    if (a) --arrived_count_;
    return a;
  }
  size_t arrived_count() const { return arrived_count_; }

  // A message of `bytes` arrived (or began to) from k.peer: the receive posted for it, if any.
  // `self` is this rank. A receive of another size is consumed and reported as the error.
  Result<std::optional<Posted>> MatchArrival(int self, const MatchKey& k, Bytes bytes);
  // A receive of `bytes` is posted for k: the message that arrived for it, if any; a message of
  // another size is consumed (its buffer pooled again) and reported as the error.
  Result<std::optional<Arrived>> MatchPost(int self, const MatchKey& k, Bytes bytes);
  // The error for a receive of `posted` bytes meeting a message of `sent` bytes: names both
  // ranks, the channel, the tag and both sizes.
  static Status SizeMismatch(int self, const MatchKey& k, Bytes sent, Bytes posted);
  // A whole message arrived with its payload in hand (`data`; nullptr: filler, zeros): copied
  // into the receive posted for it, which is returned for the caller to complete; else kept
  // as an arrival with a pooled copy (and `handle`). The one path for a rank's message to
  // itself and for payloads that ride inside their header, whatever the transport.
  Result<std::optional<Posted>> ArriveWhole(int self, const MatchKey& k, const void* data,
                                            Bytes bytes, uint64_t remote_data,
                                            uint64_t handle = 0);
  // Fills a receive's buffer from a held message (zeros when it carried no data) and returns
  // the message's buffer to the pool.
  void Deliver(Arrived a, void* into, Bytes bytes);

  // A buffer of at least `bytes`, reusing a returned one when possible.
  Buffer TakeBuffer(Bytes bytes);
  void ReturnBuffer(Buffer buf);

 private:
  template <typename Map>
  static auto Take(Map& m, const MatchKey& k) -> std::optional<typename Map::mapped_type::value_type> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    auto v = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) m.erase(it);
    return v;
  }

  static uint64_t FlowOf(const MatchKey& k) {
    return static_cast<uint64_t>(static_cast<uint32_t>(k.peer)) << 16 | k.channel;
  }

  std::unordered_map<MatchKey, std::deque<Posted>, MatchKeyHash> posted_;
  std::unordered_map<uint64_t, int> posted_per_flow_;
  std::unordered_map<MatchKey, std::deque<Arrived>, MatchKeyHash> arrived_;
  size_t arrived_count_ = 0;
  std::vector<Buffer> pool_;
};

}  // namespace genie::net
