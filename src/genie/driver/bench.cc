#include "genie/driver/bench.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "genie/common/checked_math.h"
#include "genie/launch/local_launcher.h"
#include "genie/record/output_guard.h"
#include "genie/runtime/verify_data.h"

namespace genie::driver {

namespace fs = std::filesystem;

Status CheckBenchFits(const BenchOptions& o, const BenchPlan& plan, int ranks,
                      const std::vector<int>& ranks_here) {
  GENIE_RETURN_IF_ERROR(record::CheckOutputs({{}, {o.json_path}, {o.report_path}, {}}));
  Bytes need = 0;
  for (int r : ranks_here) {
    GENIE_ASSIGN_OR_RETURN(Bytes bytes, BenchCheckBytes(plan, ranks, r));
    need = SaturatingAdd(need, bytes);
  }
  const auto [avail, source] = runtime::AvailableMemory();
  if (need == 0 || need <= avail) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "-b {} -e {}: the data check (-c) of the largest size needs {} of memory on this machine "
      "(the data and receive buffers of {} rank(s) at once), but only {} is available ({}); "
      "pass -c 0 (timing needs no data) or a smaller -e",
      o.min_bytes, o.max_bytes, FormatBytes(need), ranks_here.size(), FormatBytes(avail),
      source));
}

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
      std::vector<int> all(static_cast<size_t>(o.ranks));
      for (int r = 0; r < o.ranks; ++r) all[static_cast<size_t>(r)] = r;
      if (Status fits = CheckBenchFits(o, *plan, o.ranks, all); !fits.ok()) {
        std::cerr << "genie bench: " << fits.message() << "\n";
        return fits.code() == Status::Code::kIoError ? launch::kExitFailed : launch::kExitBadInput;
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
