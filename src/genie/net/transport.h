// Transport: how a rank's messages reach other ranks for real. A small non-blocking contract
// in the spirit of NCCL's net plugin (isend / irecv / test) and libfabric (tagged messages,
// RMA writes with remote CQ data), so TCP today and a libfabric transport next implement the
// same interface and RealBackend does not change:
//
//  * two-sided: PostSend / PostRecv of (peer, channel, tag, bytes); a receive matches the
//    first message from `peer` on `channel` with `tag`, in order. A message that arrives
//    before its receive is posted is kept by the transport until it is (unexpected message).
//  * one-sided: RegisterRegion exposes local memory under a key (sent to peers out of band,
//    e.g. in a two-sided message); PostWrite puts bytes at (key, offset) of a peer's region and
//    delivers a 32-bit immediate to it — what NCCL's RDMA transport does with
//    RDMA_WRITE_WITH_IMM. On TCP the write is emulated by a frame the receiver copies.
//  * channels: C parallel connections (flows) per peer pair; `channel` picks one (mod C).
//  * a message to one's own rank is matched locally (copied), never touching the network.
//
// Lifecycle: Listen() -> publish the address through a rendezvous -> Connect(all addresses,
// the peers this rank talks to) -> post operations while the EventLoop runs -> Shutdown().
//
// Peers: Connect() opens connections only to the ranks it is given (runtime/peer_set.h works
// them out from the rank's plans, so both ends of every pair name each other and nobody opens
// the N² mesh). The lower rank of a pair listens, the higher one dials, C connections per
// pair. Operations to a rank outside the set are a fatal error naming it. Completions and failures
// are reported to the TransportEvents sink, always from the loop (never from inside a Post* call).
//
// Liveness: from Connect() to Shutdown(), every connected peer must be heard from (any
// traffic counts) at least once per peer_timeout, or OnFatal names it. A transport keeps its
// own side alive with heartbeats to peers it has sent nothing to for a while, so an idle but
// running rank is never mistaken for a stopped or cut-off one. A rank must therefore keep
// driving its EventLoop: one that does not for longer than peer_timeout looks dead to its peers.
//
// Threading: a transport belongs to one EventLoop; call it only on that loop's thread.
// Memory: buffers passed to Post* must stay valid until their completion is reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/env/env.h"

namespace genie::net {

struct TransportOptions {
  int rank = 0;
  int world_size = 1;
  std::string job_id;                   // checked in every connection's handshake
  std::string bind_addr = "127.0.0.1";  // the only local address used (listen and connect)
  int channels = 1;                     // connections per peer pair
  std::string tcp_congestion;           // kernel algorithm name ("cubic", "bbr"); empty = default
  // Connect deadline, TCP_USER_TIMEOUT, and liveness: a connected peer silent this long is
  // fatal (heartbeats keep idle peers audible; see above).
  TimeNs peer_timeout = 30 * kNsPerSec;
  int socket_buffer_bytes = 4 << 20;    // SO_SNDBUF / SO_RCVBUF
  Bytes max_message_bytes = Bytes{1} << 36;  // larger frames are treated as corruption
  // Liveness (peer silence, heartbeats) reads time here; nullptr = CLOCK_MONOTONIC. Tests pass
  // an env::ManualEnv. Borrowed: must outlive the transport.
  const env::Env* clock = nullptr;
  // libfabric transport (net/fabric/) only: the provider as fi_getinfo names it, the domain
  // (NIC) to use (empty: the one bind_addr is on, else the provider's first), and whether
  // payloads travel as one-sided writes with remote CQ data (--fabric-rma).
  std::string fabric_provider = "tcp;ofi_rxm";
  std::string fabric_domain;
  bool fabric_rma = false;
};

// Per-peer figures (tests count them; results report them). Payload bytes only: control
// frames (handshake, heartbeats, goodbyes) are not counted.
struct PeerCounters {
  uint64_t bytes_sent = 0;  // of messages and writes handed over whole
  uint64_t messages_sent = 0;
  uint64_t bytes_received = 0;  // of messages and writes landed whole
  uint64_t messages_received = 0;
  // Payload bytes as they move on the wire, a message's partial progress included (TCP: each
  // send and receive on the socket; libfabric: each segment completed). These move during a
  // message that lasts longer than --peer-timeout, where the two above move only at its end:
  // progress (the watchdog) is judged by them.
  uint64_t wire_bytes_sent = 0;
  uint64_t wire_bytes_received = 0;
  uint64_t writes_sent = 0;
  uint64_t writes_received = 0;
  int connections = 0;  // established connections to this peer right now
};

// bbr's PROBE_RTT on a rank's connections (net/tcp/probe_rtt_watch.h): episodes begun and the
// time spent in them, summed over its sockets.
struct ProbeRttTotals {
  int64_t episodes = 0;
  TimeNs ns = 0;
  TimeNs last_begin = -1;  // when the latest episode began (the transport's clock; -1: none)
};

// Every rank but `rank`: the full mesh (tests, bench, doctor).
std::vector<int> AllPeers(int rank, int world_size);
// `peers` sorted, without duplicates; InvalidArgument naming the rank when one is outside
// [0, world_size) or is `rank` itself.
Result<std::vector<int>> NormalizePeers(std::vector<int> peers, int rank, int world_size);

struct SendOp {
  int peer = -1;
  uint16_t channel = 0;
  uint64_t tag = 0;
  const void* data = nullptr;  // nullptr: no real data, the wire carries filler
  Bytes bytes = 0;
  uint64_t cookie = 0;  // returned in OnSendDone
  // Delivered to the receiver with its completion (libfabric's remote CQ data of
  // fi_tsenddata); RealBackend carries modelled delivery deadlines in it.
  uint64_t remote_data = 0;
};

struct RecvOp {
  int peer = -1;
  uint16_t channel = 0;
  uint64_t tag = 0;
  void* into = nullptr;  // nullptr: discard the payload
  Bytes bytes = 0;       // must equal the sender's; a mismatch is a fatal error naming both
  uint64_t cookie = 0;
};

struct WriteOp {
  int peer = -1;
  uint16_t channel = 0;
  const void* data = nullptr;  // nullptr: filler
  Bytes bytes = 0;
  uint64_t remote_key = 0;  // from the peer's RegisterRegion
  Bytes remote_offset = 0;
  uint32_t imm = 0;         // delivered to the peer with OnRemoteWrite
  uint64_t cookie = 0;
};

// One connection to a peer as the network sees it: the addresses and ports of both ends
// ("10.100.0.1:41234"), from this rank's side. What ECMP with ports in its hash (a testbed's
// --hash l4) decides a connection's path by (testbed/ecmp.h); recorded in the rank's stream.
struct ConnectionEndpoints {
  int peer = -1;
  uint16_t channel = 0;
  std::string local;
  std::string remote;
  bool operator==(const ConnectionEndpoints&) const = default;
};

// Receives completions. Called on the loop thread only.
class TransportEvents {
 public:
  virtual ~TransportEvents() = default;
  // The payload has left this rank (handed to the kernel); the buffer may be reused.
  virtual void OnSendDone(uint64_t cookie) = 0;
  virtual void OnRecvDone(uint64_t cookie, Bytes bytes, uint64_t remote_data) = 0;
  virtual void OnWriteDone(uint64_t cookie) = 0;
  // A peer's write landed in region `key` at [offset, offset + bytes).
  virtual void OnRemoteWrite(int peer, uint16_t channel, uint64_t key, Bytes offset, Bytes bytes,
                             uint32_t imm) = 0;
  // A peer is lost or misbehaved; the message names the peer rank. Pending ops to it never
  // complete. The transport keeps running for other peers; the caller usually stops.
  virtual void OnFatal(const Status& status) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual std::string name() const = 0;
  virtual void SetEvents(TransportEvents* events) = 0;

  // Starts listening on the bind address; returns this rank's address for the rendezvous.
  virtual Result<std::string> Listen() = 0;
  // Establishes the C connections to every rank in `peers` (ascending, without this rank),
  // driving the event loop itself until all are up or peer_timeout has passed. addresses[r]
  // is rank r's Listen() result (only the peers' are used).
  virtual Status Connect(const std::vector<std::string>& addresses,
                         const std::vector<int>& peers) = 0;

  virtual void PostSend(const SendOp& op) = 0;
  virtual void PostRecv(const RecvOp& op) = 0;
  virtual Result<uint64_t> RegisterRegion(void* base, Bytes bytes) = 0;
  virtual void PostWrite(const WriteOp& op) = 0;

  // Orderly end: flushes queued frames, says goodbye on every connection and waits (driving
  // the loop, at most `timeout`) for every peer's goodbye; then closes everything. Doubles as
  // a final barrier. Returns Timeout naming the peers that did not answer.
  virtual Status Shutdown(TimeNs timeout) = 0;
  // Failure end: tells every connected peer that this rank gives up and why — peers report
  // that reason (naming the rank it is about) rather than just "lost this rank" — waits at
  // most `linger` for the news to leave, then closes everything. Queued frames are dropped.
  virtual void Abort(const std::string& reason, TimeNs linger) = 0;

  virtual const PeerCounters& counters(int peer) const = 0;
  // Messages that arrived with no receive posted yet and are still unclaimed.
  virtual size_t unexpected_messages() const = 0;
  // Every connection established since Connect(), per peer and channel, in the order they
  // came up (closed ones included). Empty where the transport cannot tell (libfabric: its
  // provider owns the sockets).
  virtual std::vector<ConnectionEndpoints> connection_endpoints() const { return {}; }
  // Since Connect(): how long this rank's connections spent in bbr's PROBE_RTT (zeros where
  // they do not run bbr, or the transport cannot tell: libfabric's provider owns its sockets).
  virtual ProbeRttTotals probe_rtt() const { return {}; }
};

}  // namespace genie::net
