// The TCP transport's private parts, shared by its files (tcp_transport.cc: posting and
// completions; connector.cc: listen, dial, handshake; conn_io.cc: the read state machine and
// the write path; matching.cc: tag matching and flow control; teardown.cc: Shutdown/Abort,
// liveness hooks). Not for use outside net/tcp/.
//
// Conn: one TCP connection, owned by TcpTransport::conns_ (by fd) until closed, then parked in
// dead_ until the next loop turn so that a handler running on it may finish. OutFrame: a frame
// queued on a connection; its payload is the caller's buffer (valid until its completion).
// Threading: the transport's loop thread only.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "genie/net/frame.h"
#include "genie/net/matcher.h"
#include "genie/net/tcp/tcp_transport.h"

namespace genie::net::tcp_internal {

constexpr size_t kReadBufferBytes = 64 << 10;
constexpr size_t kScratchBytes = 1 << 20;
// Bytes read from one connection per readiness event, so one busy peer cannot starve others.
constexpr size_t kReadBudget = 4 << 20;
constexpr TimeNs kConnectRetry = 50 * kNsPerMs;
// Unexpected payload bytes held before connections without a waiting receive stop being read.
constexpr Bytes kUnexpectedCap = Bytes{64} << 20;

enum Kind : int { kControl = 0, kSendKind = 1, kWriteKind = 2 };

const char* TypeName(FrameType t);

}  // namespace genie::net::tcp_internal

namespace genie::net {

struct TcpTransport::OutFrame {
  unsigned char hdr[kFrameHeaderBytes];
  const unsigned char* data;  // nullptr: filler from kZeros
  Bytes bytes;
  Bytes done;  // of kFrameHeaderBytes + bytes
  int kind;
  uint64_t cookie;
  FrameType type;
};

struct TcpTransport::Conn {
  enum class State { kConnecting, kAwaitAck, kAwaitHello, kOpen, kClosed };
  int fd = -1;
  int peer = -1;
  int channel = -1;
  bool outgoing = false;
  State state = State::kConnecting;
  std::string remote;
  std::deque<OutFrame> outq;
  bool want_out = false;
  bool paused = false;  // not reading: too many unexpected bytes buffered (flow control)
  uint64_t send_seq = 0;
  uint64_t recv_seq = 0;
  bool bye_queued = false;
  bool bye_flushed = false;
  bool bye_received = false;
  // Receive state.
  std::vector<unsigned char> rbuf;
  size_t rpos = 0, rend = 0;
  bool in_payload = false;
  FrameHeader cur;
  enum class Dest { kPosted, kArrived, kDiscard, kRegion, kText } dest = Dest::kDiscard;
  unsigned char* target = nullptr;
  Bytes got = 0;
  MessageMatcher::Posted posted{};
  MessageMatcher::Arrived arrived{};
  std::string text;
};
}  // namespace genie::net
