// LaunchGuardian: makes a launcher's ranks die with the launcher, however it dies. A launcher
// killed by SIGKILL (an OOM kill, `kill -9`, a batch system's hard stop) runs no cleanup, and its
// ranks would keep running, sending and holding the testbed's faults, until someone noticed.
//
// Two lines of defence, both set up by the launcher:
//  - each rank is started with PR_SET_PDEATHSIG = SIGTERM (ArmParentDeathSignal, in the forked
//    child before exec): the kernel tells it the moment the launcher is gone, and a genie rank
//    stops as it would on Ctrl-C, its results so far marked incomplete;
//  - a small guardian process, forked after the ranks, holds a pidfd of every rank (pidfds never
//    name a reused pid) and the read end of a pipe whose write end only the launcher holds.
//    When the pipe closes without the launcher having said "done", the launcher died: the
//    guardian sends SIGTERM to every rank still there, waits the launcher's grace period, and
//    sends SIGKILL to those that ignored it (a program run with --exec may).
// A testbed run's faults, filter rules and delay helpers are the fault guardian's
// (testbed/fault_runner.h): it clears them when the rank that played them dies, so killing the
// ranks is enough to undo them.
//
// Owned by the launcher's thread (RunLocalRanks); not thread-safe. The guardian process uses
// only async-signal-safe calls after fork.
#pragma once

#include <sys/types.h>

#include <vector>

#include "genie/common/units.h"

namespace genie::launch {

// In a forked child before exec: asks the kernel for SIGTERM when `launcher` (the parent) dies,
// and exits at once if it already has (the fork raced its death).
void ArmParentDeathSignal(pid_t launcher);

class LaunchGuardian {
 public:
  LaunchGuardian() = default;
  ~LaunchGuardian();  // Done() if the launcher returns without saying it
  LaunchGuardian(const LaunchGuardian&) = delete;
  LaunchGuardian& operator=(const LaunchGuardian&) = delete;

  // Keeps a pidfd of a rank just forked (not yet reaped, so the pid cannot have been reused).
  // Call before Start().
  void Watch(pid_t rank);

  // Forks the guardian. Returns false (and the ranks rely on the parent-death signal alone)
  // when the pipe or the fork fails.
  bool Start(TimeNs grace);

  // The launcher is returning normally: the guardian exits without touching anything.
  void Done();

  pid_t pid() const { return pid_; }

 private:
  std::vector<int> pidfds_;
  int pipe_write_ = -1;
  pid_t pid_ = -1;
};

}  // namespace genie::launch
