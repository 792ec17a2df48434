#include "genie/net/fd_limit.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>

namespace genie::net {

FdLimit RaiseFdLimit() {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return {};
  if (rl.rlim_cur < rl.rlim_max) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      rl = raised;
    } else {
      spdlog::debug("cannot raise RLIMIT_NOFILE to {}: {}", rl.rlim_max, strerror(errno));
    }
  }
  return {static_cast<uint64_t>(rl.rlim_cur), static_cast<uint64_t>(rl.rlim_max)};
}

Status CheckFdBudget(int rank, uint64_t connections, int channels) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return Status::Ok();
  const uint64_t need = connections + kFdReserve;
  if (need <= rl.rlim_cur) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "rank {}: needs {} file descriptors ({} connections, {} channel(s) per peer, + {} for the "
      "rest) but RLIMIT_NOFILE allows {} (hard limit {}); raise it (ulimit -n {} before "
      "launching, or LimitNOFILE= / limits.conf for the hard limit) or use fewer --channels",
      rank, need, connections, channels, kFdReserve, rl.rlim_cur, rl.rlim_max, need));
}

}  // namespace genie::net
