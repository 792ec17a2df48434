// Pair probes: timed transfers and round trips between two ranks of a RealBackend — what
// `genie doctor` scans a fabric with and `genie run --localize` ends a run with. Both ranks of
// a pair call the same function with the same arguments (and tags); each learns its half of
// the figures. The loop runs inside the calls: use them on the rank's loop thread, outside
// any loop callback, while nothing else is posted on the backend.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"

namespace genie::driver {

// This network namespace's TCP segments sent, sent again (/proc/net/snmp) and sent again in vain
// (/proc/net/netstat TCPDSACKRecvSegs: the receiver reported, by D-SACK, that it already had
// them). Retransmissions a D-SACK reports are reordering or a late ACK mistaken for loss — on
// a healthy testbed nearly all of them (710 of 710 on one host of a star:8 after a doctor scan
// and a benchmark) — so loss is judged on the others.
struct TcpSegments {
  double out = 0, retrans = 0, spurious = 0;
  // Segments sent again that the receiver had not got: retransmissions less the spurious ones.
  double Resent() const { return retrans > spurious ? retrans - spurious : 0; }
};
TcpSegments ReadTcpSegments();

// Posts operations and runs the loop until all of them completed (or the backend failed).
class Batch {
 public:
  explicit Batch(real_backend::RealBackend& b) : b_(b) {}
  void Send(int peer, uint64_t tag, Bytes bytes, const void* data = nullptr,
            std::function<void()> then = nullptr);
  void Recv(int peer, uint64_t tag, Bytes bytes, void* into = nullptr,
            std::function<void()> then = nullptr);
  // False when the backend failed (status() names the peer).
  bool Wait();

 private:
  void Post(bool send, const runtime::Message& m, std::function<void()> then);
  real_backend::RealBackend& b_;
  int pending_ = 0;
};

// Receive rate of a stream of messages: the bytes over the time from when the receiver was
// ready (or the pattern started) to the last arrival, in GB/s (NaN when nothing arrived).
// Arrival times of single messages are not used: completions that one read delivers share a
// loop turn's timestamp.
double RateGbps(TimeNs start, const std::vector<TimeNs>& done, Bytes message);

// One direction from -> to, alone on the path, `count` messages of `message` bytes. The
// receiver posts its receives and says "ready" (so no byte waits in a socket buffer for it);
// the sender, once free of its previous pair, sends a zero-byte "start" and then the data on
// the same connection; the receiver times from the start's arrival to the last byte and says
// "done", which is when the sender reads its retransmissions. Uses tags tag..tag+3.
struct DirectionFigures {
  double gbps = 0;                 // the receiver's
  TcpSegments sender_delta;        // the sender's: segments sent, resent and resent in vain meanwhile
};
bool MeasureDirection(real_backend::RealBackend& b, int from, int to, uint64_t tag, Bytes message,
                      Bytes count, DirectionFigures* out);

// `pings` small-message round trips started by `a` with `c` (tags tag, tag+1); `a` gets their
// median in µs, `c` leaves it untouched.
bool MeasurePings(real_backend::RealBackend& b, int a, int c, uint64_t tag, int pings,
                  double* median_us);

}  // namespace genie::driver
