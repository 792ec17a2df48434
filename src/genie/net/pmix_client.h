// PmixExchange: publishes one value per rank through the PMIx server of the launcher that
// started this process (Open MPI's mpirun, srun --mpi=pmix) and returns every rank's value:
// PMIx_Init, Put (global), Commit, Fence collecting the data, Get per rank, Finalize. Built on
// Debian's libpmix-dev when CMake finds it (GENIE_HAVE_PMIX); without it every call fails with
// an error that says so.
// Blocking, bounded by the timeout; call once per process, before the event loop starts.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

// True when genie was built with PMIx.
bool HavePmix();

// `key` must be the same on every rank; `rank` and `world_size` are what the launcher's
// variables said (checked against what the PMIx server says).
Result<std::vector<std::string>> PmixExchange(const std::string& key, int rank, int world_size,
                                              const std::string& value, TimeNs timeout);

}  // namespace genie::net
