#include "genie/net/liveness.h"

#include <algorithm>

namespace genie::net {

namespace {
constexpr TimeNs kMinInterval = 10 * kNsPerMs;
constexpr TimeNs kMaxInterval = kNsPerSec;
}  // namespace

TimeNs PeerLiveness::IntervalFor(TimeNs peer_timeout, size_t peers) {
  const TimeNs most = std::max(kMaxInterval, kMaxInterval * static_cast<TimeNs>((peers + 15) / 16));
  return std::max(kMinInterval, std::min(peer_timeout / 4, most));
}

void PeerLiveness::SetPeers(std::vector<int> peers) {
  watched_ = std::move(peers);
  if (!ticking_) interval_ = IntervalFor(peer_timeout_, watched_.size());
}

PeerLiveness::PeerLiveness(int rank, int world_size, TimeNs peer_timeout, const env::Env* clock)
    : rank_(rank),
      peer_timeout_(peer_timeout),
      interval_(IntervalFor(peer_timeout)),
      clock_(clock),
      peers_(static_cast<size_t>(world_size)) {
  for (int p = 0; p < world_size; ++p) {
    if (p != rank) watched_.push_back(p);
  }
}

void PeerLiveness::StartTicking() {
  last_tick_ = clock_->Now();
  ticking_ = true;
}

void PeerLiveness::StartChecking() {
  const TimeNs now = clock_->Now();
  for (Peer& p : peers_) {
    p.heard = false;
    p.last_heard = now;
  }
  checking_ = true;
}

void PeerLiveness::Tick(const TickActions& actions) {
  const TimeNs now = clock_->Now();
  // Silence counts only while the owner's loop runs. If it was not driven for a while (busy
  // elsewhere, stopped, starved of CPU), the peers' frames waited unread, and that time is not
  // theirs to answer for: a tick counts at most one interval.
  const TimeNs not_counted = std::max<TimeNs>(0, now - last_tick_ - interval_);
  last_tick_ = now;
  for (int p : watched_) {
    Peer& l = peers_[static_cast<size_t>(p)];
    const Link link = actions.link(p);
    // A heartbeat only to a peer that nothing went to since the last tick.
    if (!l.sent && link.open && link.can_heartbeat) actions.send_heartbeat(p);
    l.sent = false;
    const bool heard = l.heard;
    l.heard = false;
    if (!checking_ || l.done) continue;
    if (!link.open) continue;  // lost (reported then) or closed in order
    if (heard || link.excused) {
      l.last_heard = now;
      continue;
    }
    l.last_heard = std::min(now, l.last_heard + not_counted);
    const TimeNs silent = now - l.last_heard;
    if (silent < peer_timeout_) continue;
    l.done = true;
    actions.silent(p, silent);
  }
}

}  // namespace genie::net
