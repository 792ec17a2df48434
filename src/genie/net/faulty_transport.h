// FaultyTransport: a Transport decorator over any Transport that misbehaves towards chosen
// peers on cue — LevelDB's fault-injecting Env, for the network. Tests put it where the real
// transport would be (RealBackend takes a TransportFactory; Wrap() makes one) to produce
// failures deterministically, without killing processes or pulling cables.
//
// A Fault concerns one peer and starts once `after_messages` messages (sends and writes) were
// posted to that peer, or `at` after Connect() returned, whichever comes first. From then on:
//   kDrop   messages to the peer complete here but never leave (a black-holed link);
//   kDelay  messages to the peer leave `delay` later than posted (in order);
//   kStall  messages to the peer never leave nor complete, and receives from it never complete
//           (a hung peer; nothing is reported: liveness above must notice);
//   kKill   the peer is lost: OnFatal names it once (as the inner transport would report a
//           crashed peer), then operations to and completions from it vanish.
// With no faults it is a pure pass-through, which the conformance suite checks.
//
// Ownership: owns the inner transport; the EventLoop must outlive both. Threading: the loop's
// thread only, like any Transport; completions are delivered from the loop, never from Post*.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "genie/loop/event_loop.h"
#include "genie/net/transport.h"
#include "genie/net/transport_factory.h"

namespace genie::net {

struct Fault {
  enum class Kind { kDrop, kDelay, kStall, kKill };
  Kind kind = Kind::kKill;
  int peer = -1;
  uint64_t after_messages = 0;  // starts once this many were posted to the peer ...
  TimeNs at = -1;               // ... or this long after Connect() (-1: not by time)
  TimeNs delay = 0;             // kDelay: how much later each message leaves
};

// "drop", "delay", "stall", "kill".
const char* FaultKindName(Fault::Kind kind);

class FaultyTransport final : public Transport, private TransportEvents {
 public:
  // `rank` is the rank this transport serves (named in the failures it reports).
  FaultyTransport(loop::EventLoop* loop, std::unique_ptr<Transport> inner, int rank,
                  std::vector<Fault> faults);
  ~FaultyTransport() override;
  // A factory making `inner`'s transports wrapped in this one, with the same faults each time.
  static TransportFactory Wrap(TransportFactory inner, std::vector<Fault> faults);

  std::string name() const override { return "faulty(" + inner_->name() + ")"; }
  void SetEvents(TransportEvents* events) override { events_ = events; }
  Result<std::string> Listen() override { return inner_->Listen(); }
  Status Connect(const std::vector<std::string>& addresses, const std::vector<int>& peers) override;
  void PostSend(const SendOp& op) override;
  void PostRecv(const RecvOp& op) override;
  Result<uint64_t> RegisterRegion(void* base, Bytes bytes) override {
    return inner_->RegisterRegion(base, bytes);
  }
  void PostWrite(const WriteOp& op) override;
  Status Shutdown(TimeNs timeout) override { return inner_->Shutdown(timeout); }
  void Abort(const std::string& reason, TimeNs linger) override { inner_->Abort(reason, linger); }
  const PeerCounters& counters(int peer) const override { return inner_->counters(peer); }
  size_t unexpected_messages() const override { return inner_->unexpected_messages(); }
  ProbeRttTotals probe_rtt() const override { return inner_->probe_rtt(); }
  std::vector<ConnectionEndpoints> connection_endpoints() const override {
    return inner_->connection_endpoints();
  }

  // Faults that have started (tests check that the cue was reached).
  int faults_started() const { return started_; }

 private:
  struct Armed {
    Fault fault;
    bool active = false;
    TimeNs connected_at = 0;
  };
  struct Recv {
    uint64_t cookie;
    int peer;
    bool live;
  };

  // The active fault concerning `peer`, if any, after counting one more message to it.
  const Fault* OnMessageTo(int peer, bool count);
  const Fault* ActiveFor(int peer) const;
  void Start(Armed& a);
  // Runs `fn` from the loop, unless this transport is gone by then.
  void Later(TimeNs delay, std::function<void()> fn);

  void OnSendDone(uint64_t cookie) override;
  void OnRecvDone(uint64_t cookie, Bytes bytes, uint64_t remote_data) override;
  void OnWriteDone(uint64_t cookie) override;
  void OnRemoteWrite(int peer, uint16_t channel, uint64_t key, Bytes offset, Bytes bytes,
                     uint32_t imm) override;
  void OnFatal(const Status& status) override;

  loop::EventLoop* loop_;
  std::unique_ptr<Transport> inner_;
  int rank_;
  TransportEvents* events_ = nullptr;
  std::vector<Armed> faults_;
  std::vector<uint64_t> sent_;  // [peer] messages posted to it
  std::vector<Recv> recvs_;     // slot per posted receive; the inner cookie is the index
  std::vector<uint64_t> free_recvs_;
  int started_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace genie::net
