#include "genie/driver/rank_backend.h"

#include <unistd.h>

#include <cstdlib>

#include "genie/net/interface_address.h"

namespace genie::driver {

Result<runtime::RealBackendOptions> RankBackendOptions(const launch::RankEnv& env,
                                                        const std::string& bind) {
  runtime::RealBackendOptions opt;
  opt.rank = env.rank;
  opt.world_size = env.world_size;
  opt.job_id = env.job_id.empty() ? "genie" : env.job_id;
  opt.rendezvous = env.rendezvous;
  opt.local_rank = env.local_rank;
  opt.local_world_size = env.local_world_size;
  auto address = net::ResolveBindAddress(bind, env.local_rank);
  if (!address.ok()) return address.status();
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
