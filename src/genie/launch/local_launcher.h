// LocalLauncher: starts N ranks of a program on this machine (what `genie launch -n N` does),
// each with GENIE_RANK, GENIE_WORLD_SIZE, GENIE_LOCAL_RANK, GENIE_LOCAL_WORLD_SIZE,
// GENIE_RENDEZVOUS (dir:<a fresh directory unless given>) and GENIE_JOB_ID in its environment.
// On several machines (torchrun's --nnodes/--node-rank) node K starts ranks K*N .. K*N+N-1 of
// a world of nodes*N; every node is given the same rendezvous (tcp:HOST:PORT of node 0, or a
// shared directory) and so derives the same job id.
// It forwards SIGINT/SIGTERM to the ranks; when a rank fails (non-zero exit or killed) it
// stops the others (SIGTERM, then SIGKILL after a grace period) and reports that rank.
//
// Blocks the calling thread until every rank has exited; call from the main thread of a
// single-threaded process (it uses fork and a signalfd).
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::launch {

// Exit code of a rank that stops because a *peer* failed (lost connection), not by its own
// fault. When several ranks have exited by the time the launcher looks, it names a rank with
// another exit status first, so the report points at the cause rather than at a witness.
inline constexpr int kExitPeerFailed = 75;

struct LaunchOptions {
  int ranks = 1;
  std::vector<std::string> argv;  // argv[0] is the program (a path, or a name found in PATH)
  // "tcp:host:port", "dir:/path" or "/path"; empty: a fresh temporary directory (one node).
  std::string rendezvous;
  int nodes = 1;      // machines in the job, each running `ranks` ranks
  int node_rank = 0;  // which of them this is
  std::string job_id;             // empty: derived from the launcher's pid and start time
  TimeNs grace = 5 * kNsPerSec;   // SIGTERM -> SIGKILL
};

struct LaunchResult {
  int exit_code = 0;     // 0 when every rank exited 0
  int failed_rank = -1;  // the first rank that failed, if any
  std::string message;   // e.g. "rank 2 failed: exit code 3; stopped the other 3 ranks"
};

Result<LaunchResult> RunLocalRanks(const LaunchOptions& options);

}  // namespace genie::launch
