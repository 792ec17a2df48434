// The fabric transport's private parts, shared by its files (fabric_setup.cc: getinfo, open,
// hello; fabric_io.cc: posting, the CQ, matching; fabric_teardown.cc: liveness, Shutdown,
// Abort). Not for use outside net/fabric/.
//
// Ctx: the context of one libfabric operation (its fi_context2 first, for providers that ask
// for FI_CONTEXT/FI_CONTEXT2), owned by FabricTransport's stores, reused through free lists.
// A control slot is a Ctx with a buffer for a Header and an inline payload.
// Header: the control message every message starts with, little-endian as the hosts are.
// Threading: the transport's loop thread only.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <cstdint>
#include <string>

#include "genie/net/fabric/fabric_transport.h"

namespace genie::net {

namespace fabric_internal {

constexpr uint32_t kMagic = 0x4246'4E47;  // "GNFB"
constexpr int kRecvSlots = 256;           // control receives kept posted
constexpr int kSlotChunk = 64;            // control send slots allocated at a time
// Tag of a payload message: (sender rank, sequence number); the top bit is never set.
constexpr int kSeqBits = 40;
constexpr uint64_t kSeqMask = (uint64_t{1} << kSeqBits) - 1;
inline uint64_t PayloadTag(int sender, uint64_t seq) {
  return static_cast<uint64_t>(sender) << kSeqBits | (seq & kSeqMask);
}
// Remote CQ data of a one-sided PostWrite (its notice delivers it); else an RMA receive id.
constexpr uint64_t kUserWriteData = uint64_t{1} << 31;

enum Type : uint8_t {
  kHello = 1,
  kData = 2,    // a message header (payload inline or following)
  kCts = 3,     // RMA mode: the receiver's buffer is ready
  kNotice = 4,  // a one-sided write landed
  kBye = 5,
  kHeartbeat = 6,
  kAbort = 7,
};
const char* TypeName(int type);

enum Flags : uint8_t { kHasData = 1, kInline = 2 };

enum Kind : int {
  kCtrlRecv = 1,     // a control receive slot
  kCtrlSend = 2,     // a control send slot (cookie set: an inline message's send)
  kPayloadSend = 3,  // fi_tsend of a payload
  kPayloadRecv = 4,  // fi_trecv of a payload
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
  int early = -1;        // kPayloadRecv: lands in an Early buffer, not the caller's
  fid_mr* mr = nullptr;  // registered for this operation, closed at its completion
  // Slots only: header + inline payload, and its descriptor (FI_MR_LOCAL).
  unsigned char* buf = nullptr;
  void* desc = nullptr;
};

struct FabricTransport::RmaRecv {
  int peer = -1;
  uint16_t channel = 0;
  uint64_t cookie = 0;
  Bytes bytes = 0;
  uint64_t remote_data = 0;
  fid_mr* mr = nullptr;
  bool used = false;
  int early = -1;
};

// A payload received before its receive was posted (so that its sender's send completes, as
// over TCP: a schedule may wait for a send before it posts the matching receive). It lands in
// a pooled buffer (real data) or the scratch mapping (filler); the receive, once posted, takes
// it from there — at once if it landed, else when it does.
struct FabricTransport::Early {
  int peer = -1;
  uint16_t channel = 0;
  Bytes bytes = 0;
  uint64_t remote_data = 0;
  bool has_data = false;
  bool landed = false;
  bool claimed = false;  // a receive is posted for it: deliver on landing
  void* into = nullptr;
  uint64_t cookie = 0;
  MessageMatcher::Buffer buf;
};

struct FabricTransport::PendingRma {
  const void* data;
  Bytes bytes;
  uint64_t cookie;
  uint16_t channel;
};

}  // namespace genie::net
