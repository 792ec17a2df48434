// Schedule: one rank's part of a collective as data — the point-to-point steps it performs over
// byte ranges of its working buffer, and the dependencies between them. Produced by the pure
// planner (Plan), checked symbolically for all ranks at once (schedule_checker), executed by
// runtime/collective_runner on any Backend. Value type; any thread.
//
// Execution contract (the runner and the checker both follow it):
//  - Steps are grouped into phases; a phase is one chunk (dataset split) of the collective on
//    one topology dimension. Phase i of chunk k starts only when phase i-1 of chunk k is done.
//    How many chunks may be inside phases of one dimension at once is the runner's business
//    (active-chunks-per-dimension, LIFO/FIFO) and does not change correctness.
//  - Inside a phase a step starts when all its `deps` (indices into `steps`, always earlier
//    steps of the same phase) are complete. A step with a receive completes when its message
//    has arrived (and been reduced/copied); a send-only step completes when its message is sent.
//  - Sends and receives match by (sender, receiver, tag); tags are unique per ordered rank pair
//    within one collective, so matching never depends on arrival order.
//  - A kCopy step moves bytes inside the rank's own buffer (an all-to-all on several dimensions
//    re-arranges the blocks it forwards between phases); it costs no modelled time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/spec/collective_type.h"

namespace genie::collective {

struct ByteRange {
  Bytes offset = 0;
  Bytes length = 0;
  bool operator==(const ByteRange&) const = default;
};

enum class StepKind : uint8_t {
  kSend,            // send `send` range to send_peer
  kRecv,            // receive from recv_peer into `recv` range (overwrites)
  kRecvReduce,      // receive from recv_peer and reduce (sum) into `recv` range
  kRecvReduceSend,  // receive+reduce into `recv`, then send that same range to send_peer
  kRecvCopySend,    // receive into `recv`, then forward that same range to send_peer
  kCopy,            // local: copy this rank's `send` range into its `recv` range (no message)
};
const char* StepKindName(StepKind kind);
inline bool HasSend(StepKind k) {
  return k == StepKind::kSend || k == StepKind::kRecvReduceSend || k == StepKind::kRecvCopySend;
}
inline bool HasRecv(StepKind k) { return k != StepKind::kSend && k != StepKind::kCopy; }
inline bool HasReduce(StepKind k) {
  return k == StepKind::kRecvReduce || k == StepKind::kRecvReduceSend;
}

// Where the runner charges the local reduction cost (3 x floor(bytes / local-mem-bw), modelled
// backends only) of a step. ASTRA-sim charges it on the packet it sends next, which for most
// algorithms is the reduced data itself (ring: kOnReceive); its halving-doubling charges the
// size of the next, halved, message and nothing after the last exchange of the halving half.
enum class ReduceCharge : uint8_t {
  kOnReceive,   // a reducing receive costs its received bytes (the default)
  kNone,        // a reducing receive that costs nothing
  kBeforeSend,  // a sending step first costs a reduction of the bytes it sends
  // kBeforeSend, and in a payload-free simulation the step completes once that reduction is
  // charged, without waiting for delivery: ASTRA-sim's double binary tree ends a rank's phase
  // when it hands its last message to the network, and the phase's closing endpoint-delay is
  // that message's own endpoint-delay, so the phase ends the instant the message leaves.
  kBeforeSendDetached,
};

// A step's dependencies: a small vector of step indices that keeps up to two inline. Nearly
// every planned step waits for one or two others; a std::vector cost 24 bytes plus a 32-byte
// heap block per step, and a 1,024-rank simulation holds millions of steps.
class DepList {
 public:
  DepList() = default;
  DepList(std::initializer_list<uint32_t> v) { assign(v.begin(), v.end()); }
  DepList(const std::vector<uint32_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  DepList(const DepList& o) { assign(o.begin(), o.end()); }
  DepList(DepList&& o) noexcept : size_(o.size_), cap_(o.cap_), u_(o.u_) { o.Release(); }
  DepList& operator=(const DepList& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  DepList& operator=(DepList&& o) noexcept {
    if (this != &o) {
      Free();
      size_ = o.size_;
      cap_ = o.cap_;
      u_ = o.u_;
      o.Release();
    }
    return *this;
  }
  ~DepList() { Free(); }

  template <typename It>
  void assign(It first, It last) {
    clear();
    Reserve(static_cast<uint32_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<uint32_t>(*first));
  }
  void push_back(uint32_t v) {
    if (size_ == cap_) Reserve(cap_ * 2);
    data()[size_++] = v;
  }
  void clear() { size_ = 0; }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t* data() { return cap_ > kInline ? u_.heap : u_.in; }
  const uint32_t* data() const { return cap_ > kInline ? u_.heap : u_.in; }
  uint32_t* begin() { return data(); }
  uint32_t* end() { return data() + size_; }
  const uint32_t* begin() const { return data(); }
  const uint32_t* end() const { return data() + size_; }
  uint32_t operator[](size_t i) const { return data()[i]; }
  uint32_t back() const { return data()[size_ - 1]; }
  bool operator==(const DepList& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
  bool operator==(const std::vector<uint32_t>& o) const {
    return std::equal(begin(), end(), o.begin(), o.end());
  }

 private:
  static constexpr uint32_t kInline = 2;
  void Reserve(uint32_t want) {
    if (want <= cap_) return;
    auto* heap = new uint32_t[want];
    const uint32_t* from = data();
    for (uint32_t i = 0; i < size_; ++i) heap[i] = from[i];
    if (cap_ > kInline) delete[] u_.heap;
    u_.heap = heap;
    cap_ = want;
  }
  void Free() {
    if (cap_ > kInline) delete[] u_.heap;
    Release();
  }
  void Release() {
    size_ = 0;
    cap_ = kInline;
  }
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
  union U {
    uint32_t in[kInline];
    uint32_t* heap;
  } u_{};
};

struct Step {
  ByteRange send;         // source range (for *Send kinds equal to `recv`)
  ByteRange recv;         // destination range
  int send_peer = -1;     // global rank, when HasSend(kind)
  int recv_peer = -1;     // global rank, when HasRecv(kind)
  uint32_t send_tag = 0;  // tag of the outgoing message (unique per (me, send_peer))
  uint32_t recv_tag = 0;  // tag of the incoming message (unique per (recv_peer, me))
  DepList deps;           // indices of earlier steps of the same phase
  uint16_t channel = 0;   // which of the pair's C parallel flows carries the message(s)
  StepKind kind = StepKind::kSend;
  ReduceCharge charge = ReduceCharge::kOnReceive;
};

struct Phase {
  uint32_t chunk = 0;     // dataset split index
  uint16_t dim = 0;       // topology dimension the phase runs on
  CollectiveType op = CollectiveType::kAllReduce;  // what this phase does on that dimension
  uint32_t begin = 0;     // steps [begin, end) belong to this phase
  uint32_t end = 0;
};

struct Schedule {
  int rank = -1;          // global rank
  int group_index = -1;   // index in CollectiveSpec::group
  Bytes buffer_bytes = 0; // working buffer size; layout per collective type (buffer_layout.h)
  int channels = 1;
  std::vector<Step> steps;
  std::vector<Phase> phases;  // chunk-major: all phases of chunk 0, then chunk 1, ...
};

}  // namespace genie::collective
