#include "genie/driver/bench.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "genie/launch/local_launcher.h"

namespace genie::driver {

namespace fs = std::filesystem;

int Bench(const BenchOptions& o) {
  if (!o.rendezvous.empty()) setenv("GENIE_RENDEZVOUS", o.rendezvous.c_str(), 1);
  if (!o.job_id.empty()) setenv("GENIE_JOB_ID", o.job_id.c_str(), 1);
  auto env = launch::DiscoverRankEnv();
  if (!env.ok()) {
    std::cerr << "genie bench: " << env.status().message() << "\n";
    return launch::kExitBadInput;
  }
  if (env->source == "none") {
    if (o.ranks < 1) {
      std::cerr << "genie bench: no launcher around this process: run it under one "
                   "(genie launch -n 4 -- bench ..., mpiexec -n 4 genie bench ..., srun) or "
                   "give --ranks N to start N ranks on this machine\n";
      return launch::kExitBadInput;
    }
    if (o.ranks > 1) {
      // Check the flags once here rather than in every rank.
      auto plan = ResolveBench(o, o.ranks);
      if (!plan.ok()) {
        std::cerr << "genie bench: " << plan.status().message() << "\n";
        return launch::kExitBadInput;
      }
      launch::LaunchOptions lo;
      lo.ranks = o.ranks;
      lo.argv = o.argv;
      lo.argv[0] = fs::read_symlink("/proc/self/exe").string();
      auto result = launch::RunLocalRanks(lo);
      if (!result.ok()) {
        std::cerr << "genie bench: " << result.status().message() << "\n";
        return launch::kExitFailed;
      }
      if (result->exit_code != 0 && result->exit_code != launch::kExitFailed) {
        std::cerr << "genie bench: " << result->message << "\n";
      }
      return result->exit_code;
    }
  }
  return BenchRank(o, *env);
}

}  // namespace genie::driver
