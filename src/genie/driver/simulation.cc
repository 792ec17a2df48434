#include "genie/driver/simulation.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <tuple>

#include "genie/runtime/remote_memory.h"

namespace genie::driver {

Result<SimulationStats> Simulate(const runtime::RunSetup& setup,
                                 const config::NetworkConfig& network, sim::NetworkModelKind model,
                                 record::Recorder* recorder, const IterationPolicy& iterations,
                                 const MeasuredIteration* measured) {
  const int n = setup.world_size();
  static const MeasuredIteration kNone;
  const MeasuredIteration& m = measured != nullptr ? *measured : kNone;
  const std::vector<TimeNs>& rank_start_ns = m.start_ns;
  const std::vector<TimeNs>& rank_idle_ns = m.idle_ns;
  auto per_rank = [n](size_t given, const char* what) {
    return given == 0 || static_cast<int>(given) == n
               ? Status::Ok()
               : Status::InvalidArgument(std::string(what) + " given for " + std::to_string(given) +
                                         " ranks of " + std::to_string(n));
  };
  GENIE_RETURN_IF_ERROR(per_rank(rank_start_ns.size(), "start times"));
  GENIE_RETURN_IF_ERROR(per_rank(rank_idle_ns.size(), "idle times"));
  GENIE_RETURN_IF_ERROR(per_rank(m.issue_order.size(), "issue orders"));
  std::vector<std::unique_ptr<workload::RankGraph>> graphs;
  graphs.reserve(n);
  for (int r = 0; r < n; ++r) {
    GENIE_ASSIGN_OR_RETURN(auto g,
                           workload::RankGraph::Open(setup.files.rank_paths[r], r, setup.read));
    for (const auto& w : g->warnings()) spdlog::warn("rank {}: {}", r, w);
    graphs.push_back(std::move(g));
  }
  GENIE_ASSIGN_OR_RETURN(auto backend, runtime::SimBackend::Create(network, model, n));
  // Whole messages, as ASTRA-sim sends them, queue on a link at whole ns, as in ASTRA-sim; the
  // pieces of --slice / --channels keep their fractions of a ns (sim/wire.h).
  backend->network().set_cut_messages(setup.exec.plan.slice_bytes != 0 ||
                                      setup.exec.plan.channels > 1);
  for (int r = 0; r < static_cast<int>(rank_idle_ns.size()); ++r) {
    const TimeNs at = rank_start_ns.empty() ? 0 : rank_start_ns[r];
    const TimeNs idle = std::max<TimeNs>(0, rank_idle_ns[r]);
    backend->network().set_idle_since(r, static_cast<double>(at) - static_cast<double>(idle));
  }

  // Without --memory, ASTRA-sim's default applies: NO_MEMORY_EXPANSION, where a MEM_LOAD or
  // MEM_STORE is an error (the Executor names the node) rather than free.
  runtime::ExecutorConfig exec = setup.exec;
  if (measured != nullptr) exec.fault_iteration_base = measured->iteration;
  if (!exec.memory.has_value()) {
    exec.memory = config::MemoryConfig{};
    exec.memory->path = "the default memory model (no --memory given)";
  }
  // PER_NODE / POOL accesses of all ranks wait in shared FIFO queues, as in ASTRA-sim.
  std::vector<std::string> memory_notes;
  GENIE_ASSIGN_OR_RETURN(auto remote_memory,
                         runtime::RemoteMemory::CreateSimulated(*exec.memory, n, &memory_notes));
  for (const auto& note : memory_notes) spdlog::info("{}", note);
  exec.remote_memory = remote_memory.get();

  std::vector<std::unique_ptr<IterationDriver>> drivers;
  drivers.reserve(n);
  SimulationStats stats;
  Status first_error;
  int done = 0;
  for (int r = 0; r < n; ++r) {
    drivers.push_back(std::make_unique<IterationDriver>(iterations, exec, backend->ForRank(r),
                                                        *graphs[r], recorder));
    if (!m.issue_order.empty()) drivers.back()->executor().SetIssueOrder(&m.issue_order[r]);
  }
  for (int r = 0; r < n; ++r) {
    IterationDriver& d = *drivers[r];
    d.OnIteration(
        [&stats, driver = &d](int) { stats.ranks.push_back(driver->executor().summary()); });
    auto start = [driver = &d, &done, &first_error] {
      driver->Start([&done, &first_error](const Status& st) {
        ++done;
        if (!st.ok() && first_error.ok()) first_error = st;
      });
    };
    const TimeNs at = rank_start_ns.empty() ? 0 : rank_start_ns[r];
    if (at > 0) {
      backend->ForRank(r).After(at, start);
    } else {
      start();
    }
  }
  const uint64_t events = backend->Run();
  if (!backend->status().ok()) {
    // An input error the simulation cannot go past (sizes that disagree, time overflow): say
    // what the ranks concerned were running, which names the node and its size. (A message
    // refused at a later hop of its route does not name its ranks: then every unfinished one.)
    std::vector<int> ranks = backend->failed_ranks();
    for (int r = 0; ranks.empty() && r < n; ++r) {
      if (!drivers[r]->finished()) ranks.push_back(r);
    }
    std::ostringstream out;
    out << "at t=" << backend->Now() << " ns, these ranks were running:\n";
    int shown = 0;
    for (int r : ranks) {
      if (r >= 0 && r < n && shown++ < 16) out << drivers[r]->DescribeWaiting();
    }
    return backend->status().WithDetail(out.str());
  }
  if (!first_error.ok()) return first_error;

  if (done < n) {
    std::ostringstream out;
    out << "deadlock: the simulation ran out of events at " << backend->Now() << " ns with "
        << (n - done) << " of " << n << " ranks unfinished. Waiting:\n";
    int shown = 0;
    for (int r = 0; r < n && shown < 16; ++r) {
      if (drivers[r]->finished()) continue;
      out << drivers[r]->DescribeWaiting();
      ++shown;
    }
    Status unmatched = backend->CheckAllMatched();
    if (!unmatched.ok()) out << unmatched.message() << "\n";
    out << "Check that the ranks' traces agree (genie inspect reports mismatched collectives and "
           "SENDs without RECVs).";
    return Status::Internal(out.str());
  }
  std::sort(stats.ranks.begin(), stats.ranks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.iteration, a.rank) < std::tie(b.iteration, b.rank);
  });
  for (const auto& s : stats.ranks) stats.end_ns = std::max(stats.end_ns, s.finish);
  stats.events = events;
  const runtime::SimCounters counters = backend->counters();
  stats.messages = counters.messages_sent;
  stats.bytes = counters.bytes_sent;
  if (exec.compute_faults) {
    for (const auto& d : drivers) {
      for (auto& e : d->executor().ComputeFaultEvents()) stats.compute_fault_events.push_back(e);
    }
  }
  stats.memory_waited = remote_memory->waited();
  stats.memory_wait_ns = remote_memory->wait_ns();
  return stats;
}

}  // namespace genie::driver
