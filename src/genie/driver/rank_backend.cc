#include "genie/driver/rank_backend.h"

#include <unistd.h>

#include <cstdlib>

#include "genie/net/interface_address.h"
#include "genie/net/launcher_kvs.h"

namespace genie::driver {

Result<real_backend::RealBackendOptions> RankBackendOptions(const launch::RankEnv& env,
                                                        const std::string& bind) {
  real_backend::RealBackendOptions opt;
  opt.rank = env.rank;
  opt.world_size = env.world_size;
  opt.job_id = env.job_id.empty() ? "genie" : env.job_id;
  if (env.job_id_derived && net::IsLauncherKvsSpec(env.rendezvous)) {
    // Every mpiexec would derive the same id from "pmi": the launcher's name for the job tells
    // two jobs apart (output folder claims, strangers on the transport's ports).
    auto name = net::LauncherJobName(env.rendezvous, opt.peer_timeout);
    if (!name.ok()) return name.status();
    if (!name->empty()) opt.job_id = "pmi-" + *name;
  }
  opt.rendezvous = env.rendezvous;
  opt.local_rank = env.local_rank;
  opt.local_world_size = env.local_world_size;
  auto address = net::ResolveBindAddress(bind, env.local_rank);
  if (!address.ok()) return address.status().WithContext("--bind");
  opt.bind_addr = *address;
  return opt;
}

std::string HostLabel(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* h = std::getenv("GENIE_HOST"); h && *h) return h;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

}  // namespace genie::driver
