// The fabric transport's private parts, shared by its files (fabric_setup.cc: getinfo, open,
// hello; fabric_progress.cc: driving the CQ, dispatching what arrives; fabric_post.cc:
// contexts, buffers, posting sends and writes; fabric_match.cc: matching receives to message
// headers and receiving payloads, RMA rendezvous; fabric_watch.cc: crash detection;
// fabric_teardown.cc: liveness, Shutdown, Abort). Not for use outside net/fabric/.
//
// Ctx: the context of one libfabric operation (its fi_context2 first, for providers that ask
// for FI_CONTEXT/FI_CONTEXT2), owned by FabricTransport's stores, reused through free lists.
// A control slot is a Ctx with a buffer for a Header and an inline payload.
// Header: the control message every message starts with, little-endian as the hosts are.
// Threading: the transport's loop thread only.
#pragma once

#include <fmt/format.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_errno.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "genie/net/fabric/fabric_library.h"
#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

namespace fabric_internal {

constexpr uint32_t kMagic = 0x4246'4E47;  // "GNFB"
constexpr int kRecvSlots = 256;           // control receives kept posted
constexpr int kSlotChunk = 64;            // control send slots allocated at a time
constexpr int kSeqBits = 40;
constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
// A payload moves in segments, each its own provider operation, as NCCL's proxy moves a
// message in steps: the receiver hears of a long message at every segment, so --peer-timeout
// judges bytes moving, not messages ending (TCP counts every recv()); a 64 MiB message on a
// 100 Mbit/s link is 5.4 s of silence in one piece, 0.17 s per 2 MiB segment. The layout
// follows the receive slot's size S, which both sides know: segments of SegmentSize(S) bytes
// (at most kMaxSegments of them), the last one shorter. A message smaller than its slot (a
// credit) goes into one only when it needs as many segments as the slot has.
// GENIE_FABRIC_SEGMENT=BYTES overrides the size (for measurements; the same on every rank).
uint64_t SegmentBytes();
constexpr int kSlotBits = 24;  // receive slot ids in a payload tag (slots open at once)
// Segment receives a slot keeps posted (NCCL_STEPS: 8), each landing posts the next: posting a
// large message's every segment at once could fill the provider's receive queue, and the
// clear-to-send queued behind them (-FI_EAGAIN) would never leave.
constexpr uint64_t kSegmentWindow = 8;
constexpr uint64_t kMaxSegments = uint64_t{1} << (kSeqBits - kSlotBits);
inline uint64_t SegmentSize(uint64_t slot_bytes) {
  return std::max(SegmentBytes(), (slot_bytes + kMaxSegments - 1) / kMaxSegments);
}
inline uint64_t SegmentCount(uint64_t bytes, uint64_t segment) {
  return bytes == 0 ? 1 : (bytes + segment - 1) / segment;
}
// Tag of a payload segment: (sender rank, segment, the receiver's slot id from its
// clear-to-send); the top bit is never set.
inline uint64_t PayloadTag(int sender, uint64_t slot, uint64_t segment) {
  return static_cast<uint64_t>(sender) << kSeqBits | segment << kSlotBits |
         (slot & ((uint64_t{1} << kSlotBits) - 1));
}
// Remote CQ data of a one-sided PostWrite (its notice delivers it); else a receive slot id.
constexpr uint64_t kUserWriteData = uint64_t{1} << 31;
// The handle of a MessageMatcher::Arrived: the payload's sequence number (it waits at the
// sender), kInlineHandle (the payload is in the Arrived's buffer), or kEarlyHandle | Early id
// (it is being received, or was, into an Early buffer).
constexpr uint64_t kInlineHandle = ~uint64_t{0};
constexpr uint64_t kEarlyHandle = uint64_t{1} << 62;
// Bytes of pooled buffers held for receives not yet posted (payloads taken early, and the
// credit slots on offer) before further payloads wait at their sender.
constexpr uint64_t kUnexpectedCap = uint64_t{64} << 20;
// Credit window: receive slots kept on offer to a peer whose messages arrived before their
// receive was posted, so that its next ones land with no round trip (NCCL keeps
// NCCL_STEPS = 8 per channel; 4 already hide the round trip here). Sized to the largest such
// message rounded up to a power of two, at least kCreditMinBytes. Their buffers (on offer, or
// holding a payload until its receive comes) stay within kCreditCap, a budget of their own so
// that credits idle at one peer never starve kUnexpectedCap's early payloads of another (a
// sender waiting on them could deadlock a schedule that posts its receive after its send).
// Filler-only credits land in scratch and count against neither.
constexpr uint64_t kCreditCap = uint64_t{32} << 20;
// Sender: bound of FabricTransport::crossings_ either way (how fast it turns).
constexpr int kMaxCrossings = 8;
// A measurement knob: environment variable `name` as an integer (at least 0), else `fallback`.
int64_t EnvKnob(const char* name, int64_t fallback);
// GENIE_FABRIC_CREDITS=N overrides the window (0: none; for measurements).
int CreditSlots();
constexpr uint64_t kCreditMinBytes = uint64_t{64} << 10;
// Scratch (where filler payloads land: runs without --verify never read them) is one small
// shared-memory tile mapped over and over across its virtual range, so that the copy into it
// (the kernel's, from the provider's socket) writes cache-resident lines instead of streaming
// megabytes to memory, as TCP's MSG_TRUNC avoids the copy altogether. Half the L2 of the CPUs
// here (1 MiB), leaving room for the copy's source. The tile grows past it for huge ranges,
// so that a range never needs more than kScratchMaxTiles mappings (vm.max_map_count).
// GENIE_FABRIC_SCRATCH_TILE=BYTES overrides it (0: one plain anonymous mapping; for
// measurements).
uint64_t ScratchTile();
// How long a rank whose loop may spin (its machine's ranks fit on its cores) keeps polling the
// CQ after its last completion before it blocks on the wait fd. GENIE_FABRIC_SPIN_US=N sets
// it whatever the loop's policy (0: never; for measurements).
TimeNs CqSpinNs(bool loop_may_spin);
constexpr uint64_t kScratchMaxTiles = 1024;

inline std::string FiError(long rc) { return fabric_library::StrError(static_cast<int>(-rc)); }
// Key of a send waiting for its clear-to-send (RMA mode): (peer, sequence number).
inline uint64_t RmaKey(int peer, uint64_t seq) {
  return static_cast<uint64_t>(peer) << kSeqBits | (seq & kSeqMask);
}

enum Type : uint8_t {
  kHello = 1,
  kData = 2,    // a message header (payload inline or following)
  kCts = 3,     // the receiver's buffer for message `seq` is ready (slot id in `tag`)
  kNotice = 4,  // a one-sided write landed
  kBye = 5,
  kHeartbeat = 6,
  kAbort = 7,
  // A receive was posted before its message's header came: its buffer is ready for the next
  // message on (channel, tag) (user tag in `tag`, slot id in `seq`), so that the sender can
  // send the payload at once, one way, as NCCL's receiver-posted buffers let it.
  kCtsAhead = 8,
  // A receive slot on offer for any message from this rank that fits (slot id in `seq`, size
  // in `bytes`, address and key in `aux`, `aux2`): a credit of the window above. Without
  // kHasData it lands in scratch memory and takes filler payloads only (runs without
  // --verify), so it costs no memory and no copy.
  kCredit = 9,
};
const char* TypeName(int type);

// kAhead: the payload uses the receiver's kCtsAhead slot in `aux2` and follows at once;
// kCredited: it uses the receiver's kCredit slot in `aux2` and follows at once.
enum Flags : uint8_t { kHasData = 1, kInline = 2, kAhead = 4, kCredited = 8 };

enum Kind : int {
  kCtrlRecv = 1,     // a control receive slot
  kCtrlSend = 2,     // a control send slot (cookie set: an inline message's send)
  kPayloadSend = 3,  // fi_tsend of a payload
  kPayloadRecv = 4,  // fi_trecv of a payload (into a receive slot)
  kRmaSend = 5,      // fi_writedata of a payload (RMA mode)
  kUserWrite = 6,    // fi_writedata of PostWrite
};

}  // namespace fabric_internal

struct FabricTransport::Header {
  uint32_t magic;
  uint8_t type;
  uint8_t flags;
  uint16_t channel;
  uint64_t job_hash;
  uint32_t src_rank;
  uint32_t world_size;
  uint64_t tag;    // kData: the message's tag; kNotice: region key; kCts: receive slot id
  uint64_t seq;    // kData, kCts: the message's sequence number from its sender
  uint64_t bytes;  // kData, kNotice: payload bytes; kAbort: reason bytes
  uint64_t aux;    // kData: remote_data; kCts: remote address; kNotice: offset
  uint64_t aux2;   // kCts: remote key; kNotice: immediate
  // kCtsAhead, kCredit: how many data headers the receiver had from this rank when it sent
  // it (the next sequence number it expects), so that the sender can tell which message an
  // offer is for when one it sent into a credit crossed it.
  uint64_t aux3;
};

struct FabricTransport::Ctx {
  fi_context2 fictx;  // first: FI_CONTEXT/FI_CONTEXT2 providers use it
  int kind = 0;
  int peer = -1;
  uint16_t channel = 0;
  bool user = false;  // kCtrlSend: completes a caller's send (cookie)
  uint64_t cookie = 0;
  uint64_t remote_data = 0;
  Bytes bytes = 0;
  int slot = -1;         // kPayloadRecv: its receive slot (RecvSlot id)
  int send = -1;         // kPayloadSend, kRmaSend: its payload (FabricTransport::sends_ id)
  fid_mr* mr = nullptr;  // registered for this operation, closed at its completion
  // Slots only: header + inline payload, and its descriptor (FI_MR_LOCAL).
  unsigned char* buf = nullptr;
  void* desc = nullptr;
};

// A receive whose buffer was offered to its sender with a clear-to-send: the payload lands
// there by fi_writedata (RMA mode: remote CQ data = slot id) or fi_tsend into a posted
// fi_trecv (tagged: tag = (sender, slot id)). `ahead`: offered before the message's header
// came (kCtsAhead); it completes once both the header and the payload are in.
struct FabricTransport::RecvSlot {
  int peer = -1;
  uint16_t channel = 0;
  uint64_t cookie = 0;
  Bytes bytes = 0;
  uint64_t remote_data = 0;
  fid_mr* mr = nullptr;  // RMA mode: the destination's registration
  bool used = false;
  bool ahead = false;
  bool credit = false;     // a kCredit slot: payload goes to an Early (buffer in credit_bufs_)
  bool scratch = false;    // a filler-only credit: lands in scratch
  bool cancelled = false;  // its message went into a credit: freed when the cancel completes
  bool header_seen = false;
  bool landed = false;
  int early = -1;
  Bytes segment = 0;            // SegmentSize(bytes)
  uint64_t segments = 0;        // SegmentCount(bytes, segment)
  uint64_t landed_segments = 0;
  Bytes arrived = 0;  // bytes landed so far
  // Tagged mode: where segments land, the next to post, and the fi_trecvs posted (not landed,
  // or once cancelled not withdrawn), by segment % kSegmentWindow (to cancel them).
  unsigned char* dst = nullptr;
  uint64_t next_segment = 0;
  uint64_t posted = 0;
  Ctx* ctxs[fabric_internal::kSegmentWindow] = {};
};

// A payload being sent in segments into the receiver's slot, up to kSegmentWindow posted at a
// time (a large message does not fill the provider's send queue ahead of other peers' control
// messages); its caller's send completes with the last one.
struct FabricTransport::PayloadSend {
  int peer = -1;
  uint16_t channel = 0;
  uint64_t cookie = 0;
  const unsigned char* src = nullptr;
  Bytes bytes = 0;
  uint64_t slot = 0;  // the receiver's slot id
  uint64_t addr = 0;  // RMA mode: where the slot is, and its key
  uint64_t key = 0;
  Bytes segment = 0;
  uint64_t segments = 0;
  uint64_t next_segment = 0;
  uint64_t done_segments = 0;
};

// A kCtsAhead the sender has not used yet (no message on its key posted yet).
struct FabricTransport::AheadCts {
  uint64_t slot;
  Bytes bytes;
  uint64_t addr;
  uint64_t key;
  bool data = true;  // kCredit: keeps a payload; false: scratch, for filler payloads only
};

// A payload received before its receive was posted (so that its sender's send completes, as
// over TCP: a schedule may wait for a send before it posts the matching receive). It lands in
// a pooled buffer (real data) or the scratch mapping (filler); the receive, once posted, takes
// it from there — at once if it landed, else when it does. Taken only once the loop has run
// what it had queued (TakeEarly): a receive posted by a completion of the same CQ read gets
// the payload straight into its buffer instead, with no copy.
struct FabricTransport::Early {
  int peer = -1;
  uint64_t seq = 0;
  uint16_t channel = 0;
  Bytes bytes = 0;
  uint64_t remote_data = 0;
  bool has_data = false;
  bool landed = false;
  bool claimed = false;  // a receive is posted for it: deliver on landing
  Bytes held = 0;        // counted in unexpected_bytes_ (credit_bytes_) while `buf` is held
  bool from_credit = false;
  void* into = nullptr;
  uint64_t cookie = 0;
  MessageMatcher::Buffer buf;
};

struct FabricTransport::PendingRma {
  const void* data;
  Bytes bytes;
  uint64_t cookie;
  uint16_t channel;
  uint64_t tag;
};

namespace fabric_internal {
constexpr size_t kSlotBytes = sizeof(FabricTransport::Header) + FabricTransport::kInlineBytes;
static_assert(sizeof(FabricTransport::Header) == 72, "control header is 72 bytes");
inline FabricTransport::Header* HeaderOf(FabricTransport::Ctx* s) {
  return reinterpret_cast<FabricTransport::Header*>(s->buf);
}
}  // namespace fabric_internal

// Calls `post` now, or queues it when the provider is busy (-FI_EAGAIN) or others wait ahead
// (order matters: a header before its payload); the queue is retried after the CQ is read.
template <typename F>
void FabricTransport::Submit(F post, int peer, const char* what) {
  if (ep_ == nullptr) return;
  if (backlog_.empty()) {
    long rc = post();
    if (rc == 0) {
      // With a wait fd, a completion the post causes wakes the loop through it; an extra CQ
      // read per post cost ~8 syscalls a message (libfabric's own epoll_waits), so only the
      // progress timer is armed, for progress ofi_rxm does not signal (connection setup).
      if (cq_fd_ >= 0) {
        ArmProgressTimer();
      } else {
        Kick();
      }
      return;
    }
    if (rc != -FI_EAGAIN) {
      PeerLost(peer, fmt::format("{} failed: {}", what, fabric_internal::FiError(rc)));
      return;
    }
  }
  backlog_.emplace_back(std::function<long()>(post), peer);
  Kick();
}

}  // namespace genie::net
