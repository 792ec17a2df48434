// Rendezvous: how the ranks of one job learn each other's transport addresses before they
// connect. Two kinds, chosen by a spec string:
//   "dir:/path"       each rank writes /path/<job>.<rank>.addr (atomically, by rename) and waits
//                     for all the others' files — for ranks sharing a filesystem (genie launch,
//                     network namespaces on one machine).
//   "tcp:host:port"   rank 0 serves a tiny store on host:port; every other rank connects, sends
//                     its job id, rank, address and launch nonce, and receives the full table
//                     when all have arrived (torchrun's MASTER_ADDR/MASTER_PORT). A client of
//                     another job is refused and logged.
//   "pmi", "pmix"     the store of the launcher that started the ranks (mpiexec, mpirun, srun):
//                     net/launcher_kvs.h.
// Either way the exchange is also a barrier: nobody returns before every rank has published.
//
// Two jobs on one rendezvous (same MASTER_ADDR/MASTER_PORT, or the same directory and job id)
// must never mix. Each genie launch gives its ranks a nonce (GENIE_LAUNCH_NONCE, with
// GENIE_LOCAL_RANK / GENIE_LOCAL_WORLD_SIZE: the block of ranks it started); a launch's nonce
// claims its block. The store refuses a rank whose nonce is not the one of the block it claims
// when rank 0's own launch owns that block (a stray), and stops the whole exchange — every rank
// told why, InvalidArgument — when it cannot tell which of two claimants is its own: a second
// rank 0 (the other job's rank 0 found the port taken and says so), a rank registered twice,
// or two launches claiming one block. Without genie launch (torchrun, mpiexec, srun) there is
// no nonce unless GENIE_LAUNCH_NONCE is set by hand: a second rank 0 or a duplicate rank still
// stops the exchange, but a stray that fills a missing rank before either shows is not seen. In a directory, a rank ignores files of
// its own block written by another launch (stale, or another job's) and names them if it
// times out.
// Blocking, with a timeout; call before the event loop starts. Any thread.
// Clock, sleeps, files and environment variables come from an env::Env (the real one unless
// given): a directory rendezvous runs whole on a ManualEnv (in-memory files, exact timeouts);
// the tcp store's sockets are real, so its timeouts want a clock that moves by itself.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/env/env.h"

namespace genie::net {

struct RendezvousRequest {
  std::string spec;  // "dir:/path" or "tcp:host:port"
  std::string job_id;
  int rank = 0;
  int world_size = 1;
  std::string my_address;  // what this rank publishes (no spaces)
  TimeNs timeout = 30 * kNsPerSec;
};

// Who started this rank. Left empty / -1, each is read from what genie launch sets:
// GENIE_LAUNCH_NONCE, GENIE_LOCAL_RANK, GENIE_LOCAL_WORLD_SIZE.
struct RendezvousLaunch {
  std::string nonce;
  int local_rank = -1;
  int local_world_size = -1;
};

// Returns every rank's address, indexed by rank. The error names the ranks that never showed.
// `env` nullptr: env::Env::Default().
Result<std::vector<std::string>> ExchangeAddresses(const RendezvousRequest& request,
                                                   const RendezvousLaunch& launch = {},
                                                   env::Env* env = nullptr);

// Takes this rank's published address back (dir: removes its file) once every peer that needs
// it has connected, so the next job in the same directory cannot read a stale one.
void WithdrawAddress(const RendezvousRequest& request, env::Env* env = nullptr);

}  // namespace genie::net
