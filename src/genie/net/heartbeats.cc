#include "genie/net/heartbeats.h"

#include <fmt/format.h>

namespace genie::net {

Heartbeats::Heartbeats(loop::EventLoop* loop, const TransportOptions& options,
                       CompletionQueue* completions, Hooks hooks)
    : loop_(loop),
      rank_(options.rank),
      world_size_(options.world_size),
      peer_timeout_(options.peer_timeout),
      completions_(completions),
      hooks_(std::move(hooks)),
      liveness_(options.rank, options.world_size, options.peer_timeout,
                options.clock != nullptr ? options.clock : env::Env::Default()) {}

void Heartbeats::Start() {
  if (world_size_ < 2 || peer_timeout_ <= 0 || ticking_) return;
  ticking_ = true;
  liveness_.StartTicking();
  next_ = loop_->Now() + liveness_.interval();
  timer_ = loop_->RunAtCoarse(next_, [this] { Tick(); });
}

void Heartbeats::Stop() {
  liveness_.StopChecking();
  if (!ticking_) return;
  ticking_ = false;
  loop_->Cancel(timer_);
}

void Heartbeats::Tick() {
  // The next tick first, on the same grid (a tick that came late does not shift the others).
  const TimeNs now = loop_->Now();
  next_ += liveness_.interval();
  if (next_ <= now) next_ = now + liveness_.interval();
  timer_ = loop_->RunAtCoarse(next_, [this] { Tick(); });
  PeerLiveness::TickActions actions;
  actions.link = hooks_.link;
  actions.send_heartbeat = hooks_.send;
  actions.silent = [this](int p, TimeNs silent) {
    completions_->ReportFatal(Status::Unavailable(fmt::format(
        "rank {}: rank {} ({}) has not been heard from for {} (--peer-timeout {}): it stopped, "
        "hung or its link is down",
        rank_, p, hooks_.address(p), FormatDuration(silent), FormatDuration(peer_timeout_))));
    hooks_.give_up(p);
  };
  liveness_.Tick(actions);
}

}  // namespace genie::net
