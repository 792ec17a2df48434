// LocalLauncher: starts N ranks of a program on this machine (what `genie launch -n N` does),
// each with GENIE_RANK, GENIE_WORLD_SIZE, GENIE_LOCAL_RANK, GENIE_LOCAL_WORLD_SIZE,
// GENIE_RENDEZVOUS (dir:<a fresh directory unless given>), GENIE_JOB_ID and GENIE_LAUNCH_NONCE
// (random, one per launch: the rendezvous tells launches apart by it) in its environment, and
// default signal dispositions and an empty signal mask whatever the launcher inherited.
// On several machines (torchrun's --nnodes/--node-rank) node K starts ranks K*N .. K*N+N-1 of
// a world of nodes*N; every node is given the same rendezvous (tcp:HOST:PORT of node 0, or a
// shared directory) and so derives the same job id.
// It forwards SIGINT/SIGTERM to the ranks; when a rank fails (non-zero exit or killed) it
// stops the others (SIGTERM, then SIGKILL after a grace period) and reports the rank that
// caused it: a rank exiting kExitPeerFailed is only a witness, so the launcher waits a moment
// for a cause, reports the cause's exit code if one comes, and the witness's (75) otherwise.
//
// Blocks the calling thread until every rank has exited; call from the main thread of a
// single-threaded process (the real Env's ProcessGroup uses fork and a signalfd). Ranks are
// started, signalled and waited for through an env::Env (env/process.h), so the launcher's
// timing and failure rules are tested on a ManualEnv with scripted ranks.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/env/env.h"

namespace genie::launch {

// Exit codes of genie run / netcheck / launch (docs/cli.md):
inline constexpr int kExitFailed = 1;      // the workload or the network failed
inline constexpr int kExitBadInput = 2;    // refused up front: a flag, variable or workload
// A rank that stops because a *peer* failed (lost connection), not by its own fault: a witness.
// The launcher returns the cause's code instead whenever the cause ran under it.
inline constexpr int kExitPeerFailed = 75;

// Where one local rank runs when it is not simply "here": a testbed host's network namespace,
// entered before exec (so before the rank opens any socket), and extra environment (its bind
// address). Its local rank stays the launcher's: the ranks still share this machine's cores and
// clock, and the launch still claims one block of ranks at the rendezvous.
struct RankSite {
  std::string netns;  // a name under /var/run/netns; "" stays in the launcher's namespace
  std::vector<std::pair<std::string, std::string>> env;
};

struct LaunchOptions {
  int ranks = 1;
  std::vector<std::string> argv;  // argv[0] is the program (a path, or a name found in PATH)
  // "tcp:host:port", "dir:/path" or "/path"; empty: a fresh temporary directory (one node).
  std::string rendezvous;
  int nodes = 1;      // machines in the job, each running `ranks` ranks
  int node_rank = 0;  // which of them this is
  std::string job_id;             // empty: derived from the launcher's pid and start time
  TimeNs grace = 5 * kNsPerSec;   // SIGTERM -> SIGKILL
  std::vector<RankSite> sites;    // by local rank; empty: every rank here
};

struct LaunchResult {
  int exit_code = 0;     // 0 when every rank exited 0
  int failed_rank = -1;  // the rank that caused the failure (a witness only if no cause ran here)
  std::string message;   // e.g. "rank 2 failed: exit code 3; stopped the other 3 ranks"
};

// `env` nullptr: the real one (env::Env::Default()).
Result<LaunchResult> RunLocalRanks(const LaunchOptions& options, env::Env* env = nullptr);

// 64 random bits in hex: what tells one launch from another.
std::string MakeLaunchNonce();

// Sets SIGINT and SIGTERM to their default action and unblocks them, so that a process that
// inherited them ignored (a shell's `trap '' INT`, nohup, a batch system) still stops when a
// launcher forwards them. Every genie process calls it first (main thread, before any other).
void RestoreDefaultSignals();

}  // namespace genie::launch
