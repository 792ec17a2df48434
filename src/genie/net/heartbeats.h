// Heartbeats: a transport's liveness, the same over TCP and libfabric. PeerLiveness (liveness.h)
// holds the rules on the transport's clock; this ticks it every PeerLiveness::interval() on the
// event loop's housekeeping timer (EventLoop::RunAtCoarse: never spun for, not a late timer)
// from Connect() to Shutdown(), and does what a tick asks: a heartbeat through the transport to
// each peer nothing went to lately, and the fatal error for a peer found silent — worded the
// same by every transport — before the transport gives up on it.
//
// What is the transport's own comes in through Hooks: the state of its link to a peer, how a
// heartbeat is sent, the peer's address, and what giving up on a peer means (TCP closes its
// connections; libfabric marks it lost).
//
// Ownership: owned by its transport; borrows the loop and the completion queue, which must
// outlive it. Threading: the loop thread only.
#pragma once

#include <functional>
#include <string>

#include "genie/loop/event_loop.h"
#include "genie/net/completion_queue.h"
#include "genie/net/liveness.h"
#include "genie/net/transport.h"

namespace genie::net {

class Heartbeats {
 public:
  struct Hooks {
    std::function<PeerLiveness::Link(int peer)> link;
    std::function<void(int peer)> send;
    std::function<std::string(int peer)> address;
    std::function<void(int peer)> give_up;  // after the peer was reported silent
  };

  Heartbeats(loop::EventLoop* loop, const TransportOptions& options, CompletionQueue* completions,
             Hooks hooks);
  ~Heartbeats() { Stop(); }
  Heartbeats(const Heartbeats&) = delete;
  Heartbeats& operator=(const Heartbeats&) = delete;

  PeerLiveness& liveness() { return liveness_; }

  // Ticks begin (nothing without peers or without a peer timeout; once only).
  void Start();
  // Ticks and checks end: from Shutdown, Abort or destruction on, nobody is found silent.
  void Stop();
  bool ticking() const { return ticking_; }

 private:
  void Tick();

  loop::EventLoop* loop_;
  int rank_;
  int world_size_;
  TimeNs peer_timeout_;
  CompletionQueue* completions_;
  Hooks hooks_;
  PeerLiveness liveness_;
  bool ticking_ = false;
  loop::EventLoop::TimerId timer_ = 0;
  TimeNs next_ = 0;
};

}  // namespace genie::net
