// FabricTransport: what liveness needs of it (the state of a peer, giving up on a silent one;
// the ticks are net/heartbeats.h's), lost peers, and the two ends: Shutdown (goodbyes, a final
// barrier) and Abort (the reason told to every peer), over net/teardown.h.
#include <fmt/format.h>
#include <rdma/fabric.h>

#include <algorithm>

#include "genie/net/fabric/fabric_internal.h"
#include "genie/net/fabric/fabric_transport.h"
#include "genie/net/frame.h"
#include "genie/net/teardown.h"

namespace genie::net {

using namespace fabric_internal;

PeerLiveness::Link FabricTransport::LinkTo(int peer) const {
  const size_t pi = static_cast<size_t>(peer);
  PeerLiveness::Link link;
  link.open = ep_ != nullptr && !lost_[pi];
  link.excused = bye_from_[pi] != 0;
  // Heartbeats queued behind a full provider queue would tell nothing new.
  link.can_heartbeat = backlog_.empty() && !shutting_down_;
  return link;
}

void FabricTransport::GiveUp(int peer) {
  lost_[static_cast<size_t>(peer)] = 1;
  counters_[static_cast<size_t>(peer)].connections = 0;
}

void FabricTransport::PeerLost(int peer, const std::string& why) {
  if (peer < 0 || peer >= options_.world_size) {
    ReportFatal(Status::IoError(fmt::format("rank {}: {}", options_.rank, why)));
    return;
  }
  const size_t pi = static_cast<size_t>(peer);
  if (lost_[pi]) return;  // reported once is enough
  lost_[pi] = 1;
  heartbeats_.liveness().Done(peer);
  counters_[pi].connections = 0;
  ReportFatal(Status::Unavailable(
      fmt::format("rank {} lost rank {} ({}, fabric '{}'): {} (peer exited or crashed?)",
                  options_.rank, peer, AddrName(peer), provider_, why)));
}

Status FabricTransport::Shutdown(TimeNs timeout) {
  if (ep_ == nullptr) return Status::Ok();
  shutting_down_ = true;
  heartbeats_.Stop();
  for (int p : peers_) {
    if (!lost_[static_cast<size_t>(p)]) SendSimpleCtrl(p, kBye, nullptr, 0);
  }
  auto waiting = [&] {
    if (sends_in_flight_ > 0 || !backlog_.empty()) return true;
    for (int p : peers_) {
      const size_t pi = static_cast<size_t>(p);
      if (!lost_[pi] && !bye_from_[pi]) return true;
    }
    return false;
  };
  Status result = AwaitGoodbyes(loop_, completions_, options_.rank, timeout, waiting, [&] {
    std::string who;
    for (int p : peers_) {
      const size_t pi = static_cast<size_t>(p);
      if (!lost_[pi] && !bye_from_[pi]) {
        who += fmt::format("{}rank {}", who.empty() ? "" : ", ", p);
      }
    }
    if (who.empty()) who = fmt::format("nobody ({} sends still in flight)", sends_in_flight_);
    return who;
  });
  CloseAll();  // completions already queued are still delivered from the loop
  return result;
}

void FabricTransport::Abort(const std::string& reason, TimeNs linger) {
  if (ep_ == nullptr) return;
  shutting_down_ = true;
  heartbeats_.Stop();
  backlog_.clear();  // queued data is dropped: the reason goes first
  const std::string text = reason.substr(0, std::min<size_t>(kMaxAbortBytes, kInlineBytes));
  for (int p : peers_) {
    if (lost_[static_cast<size_t>(p)]) continue;
    ++aborts_in_flight_;
    SendSimpleCtrl(p, kAbort, text.data(), text.size());
  }
  // Let the news out; then keep reading a little, so that the provider does not close
  // connections with unread data (a reset could overtake the reason at the peer).
  const TimeNs deadline = loop_->Now() + linger;
  constexpr TimeNs kAfter = 100 * kNsPerMs;
  DriveWhile(loop_, deadline, [this] { return aborts_in_flight_ > 0; });
  DriveWhile(loop_, std::min(deadline, loop_->Now() + kAfter), [] { return true; });
  CloseAll();
}

}  // namespace genie::net
