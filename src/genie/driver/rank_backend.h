// RankBackendOptions: a real rank's backend identity from what its launcher said — rank, world,
// job, rendezvous, local ranks — and its bind address resolved from --bind for its local rank.
// `genie run`, `bench`, `doctor` and `netcheck` start from it and add their own settings.
// Pure but for reading interface addresses and the launcher's job name; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/launch/rank_env.h"
#include "genie/real_backend/real_backend.h"

namespace genie::driver {

// Under a launcher's store with no job id given (mpiexec), the job id is the launcher's name for
// the job (net/launcher_kvs.h; this opens the store's session). Fails with the --bind
// resolution's error (prefixed "--bind: ") or the store's; the caller names the rank.
Result<real_backend::RealBackendOptions> RankBackendOptions(const launch::RankEnv& env,
                                                        const std::string& bind);

// The host a rank names itself by in findings: `given`, else GENIE_HOST (set by `genie launch
// --testbed`: h3), else the machine's hostname.
std::string HostLabel(const std::string& given = "");

}  // namespace genie::driver
