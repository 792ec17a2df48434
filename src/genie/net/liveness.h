// PeerLiveness: the bookkeeping behind "every connected peer is heard from at least once per
// peer_timeout, and an idle rank keeps itself audible with heartbeats", with no sockets in it,
// so that any transport (TCP today, libfabric next) can reuse it and tests can drive it on a
// ManualEnv instead of sleeping.
//
// The owner calls Heard(p) when bytes arrive from p, Sent(p) when bytes leave for p, and Tick()
// every interval() (from a timer). A tick asks for a heartbeat to each peer nothing went to
// since the previous tick, and finds a peer silent once no byte came from it for peer_timeout.
// Time during which the owner's own loop was not driven is not counted against peers (their
// frames waited unread meanwhile): a tick counts at most one interval of silence. A peer that
// is excused (its connection paused by flow control, or it said goodbye) is not checked; one
// found silent or Done() is reported at most once.
//
// Ownership: borrows the clock, which must outlive it. Threading: the owner's loop thread only.
#pragma once

#include <functional>
#include <vector>

#include "genie/common/units.h"
#include "genie/env/env.h"

namespace genie::net {

class PeerLiveness {
 public:
  // What the owner knows of its link to one peer at a tick.
  struct Link {
    bool open = false;           // an established connection to it is open
    bool excused = false;        // not expected to speak: paused by us, or it said goodbye
    bool can_heartbeat = false;  // a heartbeat could leave now (nothing queued ahead of it)
  };
  struct TickActions {
    std::function<Link(int peer)> link;
    std::function<void(int peer)> send_heartbeat;
    std::function<void(int peer, TimeNs silent)> silent;  // reported once per peer
  };

  // The tick interval for a timeout: peer_timeout / 4 within [10 ms, 1 s], so an idle peer is
  // heard about four times per timeout, and long timeouts cost nothing. With many peers the
  // upper bound grows (1 s per 16 peers, never past peer_timeout / 4): a full mesh of N ranks
  // on one machine would otherwise send N² heartbeats a second — 65,000 at 256 ranks, enough
  // to keep every rank runnable and starve the run.
  static TimeNs IntervalFor(TimeNs peer_timeout, size_t peers = 1);

  PeerLiveness(int rank, int world_size, TimeNs peer_timeout, const env::Env* clock);

  TimeNs interval() const { return interval_; }
  TimeNs peer_timeout() const { return peer_timeout_; }
  const env::Env& clock() const { return *clock_; }

  // The peers to keep audible and to check (the connected ones); every other rank of the
  // world until set. Ascending, without this rank. Before StartTicking() it also sets the
  // interval for that many peers (IntervalFor).
  void SetPeers(std::vector<int> peers);
  const std::vector<int>& peers() const { return watched_; }

  // Ticks begin (heartbeats go out from now on; nobody is checked yet).
  void StartTicking();
  // Silence is counted from now on (every peer counts as just heard).
  void StartChecking();
  void StopChecking() { checking_ = false; }
  bool checking() const { return checking_; }

  void Heard(int peer) { peers_[static_cast<size_t>(peer)].heard = true; }
  void Sent(int peer) { peers_[static_cast<size_t>(peer)].sent = true; }
  // The peer was reported lost some other way: never report it silent.
  void Done(int peer) { peers_[static_cast<size_t>(peer)].done = true; }

  void Tick(const TickActions& actions);

 private:
  struct Peer {
    bool heard = false;  // bytes arrived from it since the last tick
    bool sent = false;   // bytes went to it since the last tick
    bool done = false;   // reported lost or silent once: not checked again
    TimeNs last_heard = 0;
  };

  int rank_;
  TimeNs peer_timeout_;
  TimeNs interval_;
  const env::Env* clock_;
  std::vector<Peer> peers_;   // [rank]
  std::vector<int> watched_;  // ranks ticked
  TimeNs last_tick_ = 0;
  bool ticking_ = false;
  bool checking_ = false;
};

}  // namespace genie::net
