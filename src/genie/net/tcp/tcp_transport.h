// TcpTransport: the Transport over non-blocking TCP sockets on one EventLoop.
//
// Connections: C per pair of peers named in Connect() (channels); the higher rank connects to
// the lower one, binding its source to the bind address too (with IP_BIND_ADDRESS_NO_PORT, so
// the kernel picks the source port at connect() time per destination and thousands of
// connections do not exhaust the ephemeral ports), and opens with a hello frame carrying its rank,
// channel, world size and the job id; the acceptor checks them and answers with an ack. Anything
// else that connects (garbage, another job) is rejected, logged with its address, and the run goes
// on. Every later frame is checked (frame.h); a bad frame on an established connection or a
// connection that closes without goodbye is a fatal error naming the peer rank.
//
// Memory: no allocation per message. Sends go out with sendmsg straight from the caller's
// buffer (or from one shared zero buffer when the message carries no data); receives land in
// the posted buffer, in a shared scratch buffer when discarded, or — only for messages that
// arrive before their receive and carry real data — in a pooled buffer (MessageMatcher).
// Flow control: while more than 64 MiB of such payloads wait, connections on which no receive
// is posted are not read, so TCP pushes back on senders instead of memory growing.
//
// Liveness (net/heartbeats.h, shared with libfabric; PeerLiveness on TransportOptions::clock):
// from Connect() until Shutdown() a periodic tick (every peer_timeout / 4, clamped to [10 ms, 1 s], longer with many peers:
// PeerLiveness::IntervalFor) sends a payload-less heartbeat frame on channel 0 to each peer that
// nothing was sent to since the previous tick, and reports as fatal a peer from which no byte
// arrived for peer_timeout. Time during which this rank's own loop was not driven is not counted
// against peers (their frames wait unread in the sockets meanwhile); nor is time during which
// a peer's connection is paused by flow control or after its goodbye. A peer found silent is
// reported once and its connections are closed, so that it fails fast if it ever resumes.
//
// Threading: loop thread only. The EventLoop must outlive the transport.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "genie/loop/event_loop.h"
#include "genie/net/completion_queue.h"
#include "genie/net/frame.h"
#include "genie/net/heartbeats.h"
#include "genie/net/matcher.h"
#include "genie/net/tcp/probe_rtt_watch.h"
#include "genie/net/transport.h"

namespace genie::net {

class TcpTransport final : public Transport {
 public:
  static Result<std::unique_ptr<TcpTransport>> Create(loop::EventLoop* loop,
                                                      const TransportOptions& options);
  ~TcpTransport() override;

  std::string name() const override { return "tcp"; }
  void SetEvents(TransportEvents* events) override { completions_.SetEvents(events); }
  Result<std::string> Listen() override;
  Status Connect(const std::vector<std::string>& addresses, const std::vector<int>& peers) override;
  void PostSend(const SendOp& op) override;
  void PostRecv(const RecvOp& op) override;
  Result<uint64_t> RegisterRegion(void* base, Bytes bytes) override;
  void PostWrite(const WriteOp& op) override;
  Status Shutdown(TimeNs timeout) override;
  void Abort(const std::string& reason, TimeNs linger) override;
  const PeerCounters& counters(int peer) const override { return counters_.at(peer); }
  size_t unexpected_messages() const override { return matcher_.arrived_count(); }
  std::vector<ConnectionEndpoints> connection_endpoints() const override { return endpoints_; }
  ProbeRttTotals probe_rtt() const override { return probe_rtt_.Totals(loop_->Now()); }

  // Connections refused because their handshake or first frame was wrong.
  uint64_t rejected_connections() const { return rejected_; }
  const std::string& listen_address() const { return listen_address_; }

 private:
  // Defined in tcp_conn.h, the private header shared by this transport's files.
  struct OutFrame;
  struct Conn;

  TcpTransport(loop::EventLoop* loop, const TransportOptions& options);

  // connector.cc: listen, dial, handshake.
  Status StartConnect(int peer, int channel);
  void RetryConnect(int peer, int channel, const std::string& why);
  void OnAccept();
  void FinishConnect(Conn* c);
  Status OnHello(Conn* c, const FrameHeader& h);  // the acceptor's side of the handshake
  void Established(Conn* c);
  FrameExpectation ExpectationFor(const Conn* c) const;

  // conn_io.cc: the read state machine and the write path.
  void OnConnEvent(Conn* c, uint32_t events);
  void ReadSome(Conn* c);
  void PayloadMoved(Conn* c, Bytes n);  // n payload bytes of c's current frame were read
  Status BeginPayload(Conn* c);
  Status FinishPayload(Conn* c);
  void Flush(Conn* c);
  void Enqueue(Conn* c, FrameType type, uint8_t flags, uint16_t channel, uint64_t tag,
               const void* data, Bytes bytes, uint64_t offset, uint32_t imm, int kind,
               uint64_t cookie);
  void SetWantOut(Conn* c, bool want);
  void UpdateInterest(Conn* c);

  // matching.cc: tag matching of data frames and flow control.
  Status BeginData(Conn* c);   // a data frame's header arrived: where its payload goes
  Status FinishData(Conn* c);  // its payload is in: complete a receive or hold it
  void DeliverToSelf(const SendOp& op, uint16_t channel);
  void ReleaseUnexpected(Bytes bytes);
  void Resume(Conn* c);

  // teardown.cc: closing connections, Shutdown and Abort (net/teardown.h: the shared part).
  // The state of the links to `peer` for a liveness tick, and giving up on a silent peer.
  PeerLiveness::Link LinkTo(int peer) const;
  void GiveUp(int peer);
  // Closes a connection. `reason` empty = quiet (orderly); otherwise logged, and fatal when
  // the connection belongs to a known peer.
  void CloseConn(Conn* c, const std::string& reason);
  void MaybeFinishBye(Conn* c);
  bool AnyOpen() const;  // an established connection is still open
  void CloseAll();       // every connection and the listening socket, quietly

  // bbr's PROBE_RTT (probe_rtt_watch.h): sampled on the loop's housekeeping timer from
  // Connect() to Shutdown(), when the connections run bbr.
  void StartProbeRttWatch();
  void StopProbeRttWatch();
  void ProbeRttTick();

  // Completions and errors, delivered from the loop (net/completion_queue.h).
  void Complete(const Completion& done) { completions_.Complete(done); }
  void ReportFatal(Status status) { completions_.ReportFatal(std::move(status)); }
  Conn* ConnFor(int peer, uint16_t channel, const char* op);

  loop::EventLoop* loop_;
  TransportOptions options_;
  uint64_t job_hash_;
  int listen_fd_ = -1;
  std::string listen_address_;
  std::vector<std::string> addresses_;
  // The ranks connected to (Connect's peers, plus any higher rank that dialled us unplanned):
  // liveness watches them and nobody else. Empty before Connect().
  std::vector<int> peers_;
  std::vector<uint8_t> is_peer_;  // [rank]
  TimeNs connect_deadline_ = 0;
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;  // by fd
  std::vector<std::unique_ptr<Conn>> dead_;               // closed, freed on the next turn
  std::vector<std::vector<Conn*>> by_peer_;               // [peer][channel], open only
  std::vector<PeerCounters> counters_;
  int established_ = 0;  // open connections to planned peers (Connect waits for all)
  MessageMatcher matcher_;
  Bytes unexpected_bytes_ = 0;  // payload bytes held for unposted receives
  std::vector<std::pair<unsigned char*, Bytes>> regions_;
  bool shutting_down_ = false;
  uint64_t rejected_ = 0;
  std::vector<unsigned char> scratch_;
  CompletionQueue completions_;
  Heartbeats heartbeats_;  // after completions_, which it reports to
  std::string abort_reason_;  // the payload of the abort frames in flight
  std::vector<ConnectionEndpoints> endpoints_;  // every connection established, in order
  ProbeRttWatch probe_rtt_;
  loop::EventLoop::TimerId probe_rtt_timer_ = 0;  // 0: not sampling
};

}  // namespace genie::net
