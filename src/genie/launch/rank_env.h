// RankEnv: who this process is in the job (rank, world size, local rank), how to find the
// others (rendezvous spec) and which job it belongs to — discovered from the environment the
// launcher set. Understood, in this order of precedence:
//   genie launch   GENIE_RANK GENIE_WORLD_SIZE GENIE_LOCAL_RANK GENIE_LOCAL_WORLD_SIZE
//                  GENIE_RENDEZVOUS GENIE_JOB_ID
//   torchrun       RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT
//                  TORCHELASTIC_RUN_ID
//   Open MPI       OMPI_COMM_WORLD_RANK _SIZE _LOCAL_RANK _LOCAL_SIZE
//   MPICH / Hydra  PMI_RANK PMI_SIZE MPI_LOCALRANKID MPI_LOCALNRANKS (PMI_JOBID: Slurm's pmi2)
//   Slurm          SLURM_PROCID SLURM_NTASKS SLURM_LOCALID SLURM_JOB_ID SLURM_STEP_ID
// GENIE_RENDEZVOUS and GENIE_JOB_ID apply whichever launcher set the rank; without them the
// rendezvous is tcp:MASTER_ADDR:MASTER_PORT or, without those, the launcher's own store when it
// runs one: "pmi" (PMI_FD or PMI_PORT: mpiexec.mpich, srun --mpi=pmi2) or "pmix"
// (PMIX_NAMESPACE and PMIX_RANK: Open MPI's mpirun, srun --mpi=pmix), net/launcher_kvs.h. The
// job id comes from the launcher's job id or, failing that, from the rendezvous spec (identical
// on every rank; job_id_derived says so, and driver/rank_backend.h then asks the store).
// (GENIE_LAUNCH_NONCE, one per genie launch, is read by the rendezvous itself: net/rendezvous.h.)
// Numbers are digits only and in range (a port from 1 to 65535, rank < world size, local rank
// < local size <= world size); anything else is an error naming the variable.
// Pure function of the environment it is given; any thread.
#pragma once

#include <functional>
#include <string>

#include "genie/common/status.h"

namespace genie::launch {

struct RankEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = -1;  // -1: the launcher did not say
  std::string rendezvous;     // "dir:/path", "tcp:host:port", "pmi", "pmix", or empty for a
                              // single rank
  std::string job_id;
  bool job_id_derived = false;  // made up from `rendezvous`: no launcher or user named the job
  std::string source;         // "genie", "torchrun", "openmpi", "pmi", "slurm" or "none"
};

// Looks up one variable; nullptr when unset.
using EnvLookup = std::function<const char*(const char* name)>;

// Reads the real process environment by default. Errors name the variable that is wrong.
Result<RankEnv> DiscoverRankEnv(const EnvLookup& env = nullptr);

// OK for "", "dir:PATH", "tcp:HOST:PORT" with a port from 1 to 65535, "pmi" and "pmix"; the
// error says why not.
Status CheckRendezvousSpec(const std::string& spec);

}  // namespace genie::launch
