// Frame: the fixed 64-byte header in front of every message genie puts on a byte-stream
// transport (TCP), and its parser. Checked on receipt: magic, version, type, job id, source
// rank, channel, sequence and length must all be what the connection expects — a frame that
// is not is reported with a reason, and the transport closes that connection (never crashes).
//
// Wire layout (little-endian):
//   0 magic u32 "GNIE" | 4 version u16 | 6 type u8 | 7 flags u8 | 8 job u64 (hash of job id)
//  16 src rank u32 | 20 dst rank u32 | 24 channel u16 | 26 reserved u16 | 28 imm u32
//  32 tag u64 | 40 seq u64 | 48 length u64 | 56 offset u64 (kWrite: remote offset;
//  kHello: world size; kData: the sender's remote_data) ; payload of `length` bytes follows.
// The kWrite key (one-sided) travels in `tag`.
// Value types and pure functions; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "genie/common/status.h"

namespace genie::net {

inline constexpr uint32_t kFrameMagic = 0x45494E47;  // "GNIE" in little-endian bytes
inline constexpr uint16_t kFrameVersion = 1;
inline constexpr size_t kFrameHeaderBytes = 64;
// Hello payload carries the job id string; longer ids are rejected.
inline constexpr size_t kMaxJobIdBytes = 256;
// An abort's reason is cut to this many bytes.
inline constexpr size_t kMaxAbortBytes = 4096;

enum class FrameType : uint8_t {
  kHello = 1,      // connector -> acceptor: who I am (payload = job id string)
  kHelloAck = 2,   // acceptor -> connector: accepted
  kData = 3,       // two-sided message
  kWrite = 4,      // one-sided write with immediate data
  kBye = 5,        // orderly shutdown: no more frames follow on this connection
  kHeartbeat = 6,  // no payload; "still here", to a peer nothing else went to for a while
  kAbort = 7,      // this rank gives up on the job; payload = why (text); nothing follows
};

enum FrameFlags : uint8_t {
  kFlagHasData = 1,  // payload is real data (otherwise filler the receiver may discard)
};

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t version = kFrameVersion;
  FrameType type = FrameType::kData;
  uint8_t flags = 0;
  uint64_t job = 0;
  uint32_t src = 0;
  uint32_t dst = 0;
  uint16_t channel = 0;
  uint32_t imm = 0;
  uint64_t tag = 0;
  uint64_t seq = 0;
  uint64_t length = 0;
  uint64_t offset = 0;
};

// 64-bit FNV-1a of the job id: what every frame carries.
uint64_t JobHash(std::string_view job_id);

void EncodeFrame(const FrameHeader& h, unsigned char out[kFrameHeaderBytes]);
FrameHeader DecodeFrame(const unsigned char in[kFrameHeaderBytes]);

// What a connection expects of the next frame.
struct FrameExpectation {
  uint64_t job = 0;
  int64_t src = -1;       // -1: not yet known (before the hello)
  uint32_t dst = 0;       // this rank
  uint32_t world_size = 0;
  int64_t channel = -1;   // -1: not yet known
  uint32_t channels = 1;  // channels per peer pair
  uint64_t seq = 0;       // next sequence number
  uint64_t max_length = 0;
};

// Parses and validates a header; the error says which field is wrong and what was expected.
Result<FrameHeader> ParseFrame(const unsigned char in[kFrameHeaderBytes],
                               const FrameExpectation& expect);

}  // namespace genie::net
