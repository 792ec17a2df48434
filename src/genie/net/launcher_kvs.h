// The launcher's key-value store as a rendezvous: ranks started by mpiexec (MPICH/Hydra),
// Open MPI's mpirun or srun publish their transport addresses in the store their launcher
// already runs for MPI bootstrap, and need no --rendezvous. Two spec strings name it:
//   "pmi"    the PMI-1 wire protocol on PMI_FD / PMI_PORT (Hydra; srun --mpi=pmi2, whose
//            plugin also serves PMI-1): net/pmi1_client.h
//   "pmix"   the launcher's PMIx server through libpmix (mpirun of Open MPI 4/5, srun
//            --mpi=pmix): net/pmix_client.h
// launch/rank_env.h picks one when the launcher offers it and no rendezvous was given.
// The store is scoped to the launcher's job, so ranks of two jobs can never mix in it.
// Each process connects once (a process-wide session, opened by the first call that needs it)
// and finalizes after its exchange: one exchange per process. Blocking; call before the event
// loop starts; calls are serialised by a lock.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

// "pmi" or "pmix".
bool IsLauncherKvsSpec(const std::string& spec);

// The launcher's own name for the job (PMI-1: the kvsname, unique per mpiexec), empty when the
// store has none to offer before the exchange (pmix: the launcher's job id is in the
// environment already). Opens the session for the exchange that follows.
Result<std::string> LauncherJobName(const std::string& spec, TimeNs timeout);

// Publishes `my_address` as this rank's, waits for every rank of the job to do the same and
// returns all addresses indexed by rank. Errors name the rank, the launcher and what to do.
Result<std::vector<std::string>> ExchangeThroughLauncher(const std::string& spec, int rank,
                                                         int world_size,
                                                         const std::string& my_address,
                                                         TimeNs timeout);

class Pmi1Client;

// The exchange itself over a PMI-1 session (the part ExchangeThroughLauncher("pmi") adds
// connecting and finalizing to): put this rank's value, barrier; rank 0 reads all N and puts
// them back packed into as few values as the store's value length allows; barrier; every rank
// reads the packed table. 2 barriers and N/15 or so reads a rank instead of N.
Result<std::vector<std::string>> PmiAllGather(Pmi1Client& pmi, int rank, int world_size,
                                              const std::string& value, TimeNs deadline);

}  // namespace genie::net
