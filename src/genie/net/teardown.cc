#include "genie/net/teardown.h"

#include <fmt/format.h>

#include <algorithm>

namespace genie::net {

namespace {
// How often the loop comes back to check `waiting()` / `more()` when nothing happens.
constexpr TimeNs kStep = 10 * kNsPerMs;
}  // namespace

void DriveWhile(loop::EventLoop* loop, TimeNs until, const std::function<bool()>& more) {
  while (more() && loop->Now() < until) loop->RunOnce(std::min(until, loop->Now() + kStep));
}

Status AwaitGoodbyes(loop::EventLoop* loop, const CompletionQueue& completions, int rank,
                     TimeNs timeout, const std::function<bool()>& waiting,
                     const std::function<std::string()>& who) {
  const bool had_fatal = completions.fatal_seen();
  DriveWhile(loop, loop->Now() + timeout,
             [&] { return waiting() && (had_fatal || !completions.fatal_seen()); });
  if (!had_fatal && completions.fatal_seen()) {
    return Status::Unavailable("during shutdown: a peer failed (see the log above)");
  }
  if (waiting()) {
    return Status::Timeout(fmt::format("rank {}: no goodbye within {} from {}", rank,
                                       FormatDuration(timeout), who()));
  }
  return Status::Ok();
}

}  // namespace genie::net
