#include "genie/runtime/simulation.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>

#include "genie/runtime/executor.h"

namespace genie::runtime {

Result<SimulationStats> Simulate(const RunSetup& setup, const config::NetworkConfig& network,
                                 sim::NetworkModelKind model, record::Recorder* recorder) {
  const int n = setup.world_size();
  std::vector<std::unique_ptr<workload::RankGraph>> graphs;
  graphs.reserve(n);
  for (int r = 0; r < n; ++r) {
    GENIE_ASSIGN_OR_RETURN(auto g, workload::RankGraph::Open(setup.files.rank_paths[r], r, setup.read));
    for (const auto& w : g->warnings()) spdlog::warn("rank {}: {}", r, w);
    graphs.push_back(std::move(g));
  }
  GENIE_ASSIGN_OR_RETURN(auto backend, SimBackend::Create(network, model, n));

  std::vector<std::unique_ptr<Executor>> executors;
  executors.reserve(n);
  Status first_error;
  int done = 0;
  for (int r = 0; r < n; ++r) {
    executors.push_back(std::make_unique<Executor>(*graphs[r], setup.exec, backend->ForRank(r),
                                                   recorder));
  }
  for (int r = 0; r < n; ++r) {
    executors[r]->Start(0, [&](const Status& st) {
      ++done;
      if (!st.ok() && first_error.ok()) first_error = st;
    });
  }
  const uint64_t events = backend->Run();
  if (!first_error.ok()) return first_error;

  SimulationStats stats;
  if (done < n) {
    std::ostringstream out;
    out << "deadlock: the simulation ran out of events at " << backend->Now() << " ns with "
        << (n - done) << " of " << n << " ranks unfinished. Waiting:\n";
    int shown = 0;
    for (int r = 0; r < n && shown < 16; ++r) {
      if (executors[r]->finished()) continue;
      out << executors[r]->DescribePending();
      ++shown;
    }
    Status unmatched = backend->CheckAllMatched();
    if (!unmatched.ok()) out << unmatched.message() << "\n";
    out << "Check that the ranks' traces agree (genie inspect reports mismatched collectives and "
           "SENDs without RECVs).";
    return Status::Internal(out.str());
  }
  for (int r = 0; r < n; ++r) {
    stats.ranks.push_back(executors[r]->summary());
    stats.end_ns = std::max(stats.end_ns, executors[r]->summary().finish);
  }
  stats.events = events;
  return stats;
}

}  // namespace genie::runtime
