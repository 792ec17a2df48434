// ProcessGroup: the child processes one supervisor starts (what `genie launch` does with its
// ranks), and the stop signals (SIGINT, SIGTERM) sent to the supervisor itself, delivered as
// one stream of events so that a single thread can wait for "a child exited, someone asked us
// to stop, or a deadline passed" without races. Obtained from Env::NewProcessGroup(); the real
// one forks and execs, the manual one (manual_env.h) follows scripts, the faulty one
// (faulty_env.h) fails spawns and kills children on schedule.
//
// Wait statuses are waitpid(2)'s; ExitedWith / KilledBy make them for scripts and tests.
// Ownership: the group belongs to the thread that made it (the main thread of a
// single-threaded process, for the real one); children still running when it is destroyed are
// left alone (the caller waits for them first).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::env {

// What to start. The child gets default signal dispositions and an empty signal mask whatever
// the parent had, enters `netns` (a name under /var/run/netns) when given, sets `env` on top of
// the parent's environment, then execs argv[0] (a path, or a name found in PATH).
struct ProcessSpec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;
  std::string netns;
  // How the child names itself on stderr when it cannot start ("genie launch: rank 3").
  std::string who;
  // Run in a real child after its signals are reset, before exec (async-signal-safe calls
  // only): e.g. asking for a signal when the parent dies. Scripted children ignore it.
  std::function<void()> before_exec;
};

// One thing Wait() saw.
struct ProcessEvent {
  enum class Kind { kTimeout, kExited, kSignal };
  Kind kind = Kind::kTimeout;
  // kExited: every child reaped at once (pid, wait status); may be empty (a spurious wake-up).
  std::vector<std::pair<int, int>> exited;
  int signal = 0;  // kSignal: SIGINT or SIGTERM, sent to this process
};

// waitpid(2) statuses, for scripts and tests.
int ExitedWith(int code);
int KilledBy(int signal);

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  // Starts one child; returns its pid. An error (fork failed) carries the OS's reason.
  virtual Result<int> Spawn(const ProcessSpec& spec) = 0;
  // Sends `sig` to a child of this group.
  virtual void Signal(int pid, int sig) = 0;
  // Blocks until children exit, SIGINT/SIGTERM reaches this process, or the Env's clock passes
  // `deadline` (absolute, Env::Now(); -1 = no deadline).
  virtual ProcessEvent Wait(TimeNs deadline) = 0;
  // True when pids name real processes of this machine (something else may watch them).
  virtual bool RealProcesses() const { return false; }
};

}  // namespace genie::env
