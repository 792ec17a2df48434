#include "genie/driver/simulation.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <tuple>

#include "genie/common/logging.h"
#include "genie/driver/job_rank.h"
#include "genie/runtime/remote_memory.h"
#include "genie/sim/host_slots.h"

namespace genie::driver {

Result<SimulationStats> Simulate(const runtime::RunSetup& setup,
                                 const config::NetworkConfig& network, sim::NetworkModelKind model,
                                 record::Recorder* recorder, const IterationPolicy& iterations,
                                 const MeasuredIteration* measured,
                                 const SimulateInput* input) {
  const int n = setup.world_size();
  static const SimulateInput kFiles;
  const SimulateInput& in = input != nullptr ? *input : kFiles;
  const sim::RankFold* fold = in.fold;
  if (fold != nullptr && (fold->world() != n || measured != nullptr)) {
    return Status::InvalidArgument("symmetry reduction: not for this workload");
  }
  // The ranks that run: every rank, or the fold's representatives.
  std::vector<int> run;
  for (int r = 0; r < n; ++r) {
    if (fold == nullptr || fold->IsRep(r)) run.push_back(r);
  }
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
  GENIE_RETURN_IF_ERROR(per_rank(m.compute_ns.size(), "compute durations"));
  GENIE_RETURN_IF_ERROR(per_rank(m.since_open_ns.size(), "connection ages"));
  std::vector<std::unique_ptr<workload::RankGraph>> graphs(n);
  for (int r : run) {
    std::unique_ptr<workload::RankGraph> g;
    if (in.open) {
      GENIE_ASSIGN_OR_RETURN(g, in.open(r));
    } else {
      GENIE_ASSIGN_OR_RETURN(g, workload::RankGraph::Open(setup.files.rank_paths[r], r, setup.read));
    }
    for (const auto& w : g->warnings()) WarnOnce(fmt::format("rank {}: {}", r, w));
    graphs[r] = std::move(g);
  }
  // Placed on hosts: rank r at NPU npu_of[r] of the hosts' network with slots, through a
  // JobRank view; else rank r is NPU r.
  std::vector<int> npu_of;
  config::NetworkConfig placed;
  int slots = 1;
  if (!in.rank_host.empty()) {
    GENIE_RETURN_IF_ERROR(per_rank(in.rank_host.size(), "host placements"));
    if (fold != nullptr) return Status::InvalidArgument("symmetry reduction: not with placements");
    const int hosts = network.total_npus();
    std::vector<int> used(static_cast<size_t>(hosts), 0);
    for (int r = 0; r < n; ++r) {
      const int h = in.rank_host[r];
      if (h < 0 || h >= hosts) {
        return Status::InvalidArgument("rank " + std::to_string(r) + " is placed on host " +
                                       std::to_string(h) + " but " + network.path + " has " +
                                       std::to_string(hosts) + " hosts");
      }
      npu_of.push_back(h + hosts * used[static_cast<size_t>(h)]++);
    }
    slots = *std::max_element(used.begin(), used.end());
    placed = sim::WithHostSlots(network, slots);
  }
  const config::NetworkConfig* world = npu_of.empty() ? &network : &placed;
  // Connections on their known spines, on the NPUs their ranks sit on.
  config::NetworkConfig routed;
  if (!in.connection_spines.empty() && network.leaf_spine.present()) {
    if (fold != nullptr) {
      return Status::InvalidArgument("symmetry reduction: not with known spines");
    }
    routed = *world;
    for (config::EcmpConnection c : in.connection_spines) {
      if (c.src < 0 || c.src >= n || c.dst < 0 || c.dst >= n) continue;
      if (!npu_of.empty()) {
        c.src = npu_of[static_cast<size_t>(c.src)];
        c.dst = npu_of[static_cast<size_t>(c.dst)];
      }
      routed.leaf_spine.connections.push_back(c);
    }
    world = &routed;
  }
  GENIE_ASSIGN_OR_RETURN(auto backend, sim_backend::SimBackend::Create(
                                           *world, model, npu_of.empty() ? n : 0));
  if (fold != nullptr && network.machine_gbps > 0) {
    // One machine-wide link every rank's messages share (flow_model.h): no replica leaves it.
    return Status::InvalidArgument("symmetry reduction: not with machine_bandwidth");
  }
  if (fold != nullptr) GENIE_RETURN_IF_ERROR(backend->SetFold(fold));
  if (slots > 1) GENIE_RETURN_IF_ERROR(backend->ShareHostLinks(network.total_npus()));
  std::vector<std::unique_ptr<JobRank>> views;
  auto npu = [&npu_of](int r) { return npu_of.empty() ? r : npu_of[r]; };
  auto rank_backend = [&](int r) -> runtime::Backend& {
    if (npu_of.empty()) return backend->ForRank(r);
    views.push_back(std::make_unique<JobRank>(backend->ForRank(npu_of[r]), npu_of, r, 0));
    return *views.back();
  };
  // Whole messages, as ASTRA-sim sends them, queue on a link at whole ns, as in ASTRA-sim; the
  // pieces of --slice / --channels keep their fractions of a ns (sim/wire.h).
  backend->network().set_cut_messages(setup.exec.plan.slice_bytes != 0 ||
                                      setup.exec.plan.channels > 1);
  for (int r = 0; r < static_cast<int>(rank_idle_ns.size()); ++r) {
    const TimeNs at = rank_start_ns.empty() ? 0 : rank_start_ns[r];
    const TimeNs idle = std::max<TimeNs>(0, rank_idle_ns[r]);
    backend->network().set_idle_since(npu(r),
                                      static_cast<double>(at) - static_cast<double>(idle));
  }
  if (m.probe_duration_scale != 1 && network.probe_rtt.interval_ns > 0) {
    backend->network().set_probe_rtt(network.probe_rtt.interval_ns,
                                     network.probe_rtt.duration_ns * m.probe_duration_scale,
                                     network.probe_rtt.gbps);
  }
  for (int r = 0; r < static_cast<int>(m.since_open_ns.size()); ++r) {
    const TimeNs at = rank_start_ns.empty() ? 0 : rank_start_ns[r];
    backend->network().set_opened_at(
        npu(r), static_cast<double>(at) - static_cast<double>(m.since_open_ns[r]));
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

  std::vector<std::unique_ptr<IterationDriver>> drivers(n);
  SimulationStats stats;
  Status first_error;
  int done = 0;
  for (int r : run) {
    drivers[r] = std::make_unique<IterationDriver>(iterations, exec, rank_backend(r),
                                                   *graphs[r], recorder);
    if (!m.issue_order.empty()) drivers[r]->executor().SetIssueOrder(&m.issue_order[r]);
    if (!m.compute_ns.empty()) drivers[r]->executor().SetComputeDurations(&m.compute_ns[r]);
  }
  for (int r : run) {
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
      backend->ForRank(npu(r)).After(at, start);
    } else {
      start();
    }
  }
  uint64_t events = 0;
  if (in.progress) {
    constexpr uint64_t kBatch = 1 << 20;
    for (uint64_t ran; (ran = backend->queue().RunFor(kBatch)) > 0;) {
      events += ran;
      if (ran == kBatch) in.progress(backend->Now(), events);
    }
  } else {
    events = backend->Run();
  }
  const int ran_ranks = static_cast<int>(run.size());
  if (!backend->status().ok()) {
    // An input error the simulation cannot go past (sizes that disagree, time overflow): say
    // what the ranks concerned were running, which names the node and its size. (A message
    // refused at a later hop of its route does not name its ranks: then every unfinished one.)
    std::vector<int> ranks;
    for (int p : backend->failed_ranks()) {
      auto it = std::find(npu_of.begin(), npu_of.end(), p);
      ranks.push_back(npu_of.empty()            ? p
                      : it == npu_of.end() ? -1
                                           : static_cast<int>(it - npu_of.begin()));
    }
    for (int r : run) {
      if (ranks.empty() && !drivers[r]->finished()) ranks.push_back(r);
    }
    std::ostringstream out;
    out << "at t=" << backend->Now() << " ns, these ranks were running:\n";
    int shown = 0;
    for (int r : ranks) {
      if (r >= 0 && r < n && drivers[r] && shown++ < 16) out << drivers[r]->DescribeWaiting();
    }
    return backend->status().WithDetail(out.str());
  }
  if (!first_error.ok()) return first_error;

  if (done < ran_ranks) {
    std::ostringstream out;
    out << "deadlock: the simulation ran out of events at " << backend->Now() << " ns with "
        << (ran_ranks - done) << " of " << ran_ranks << " ranks unfinished"
        << (fold != nullptr ? " (symmetry reduction: representative ranks only)" : "")
        << ". Waiting:\n";
    int shown = 0;
    for (int r : run) {
      if (shown >= 16) break;
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
  if (fold != nullptr) {
    // Rank sigma^j(r) did what r did, renamed: the same summary.
    const size_t reps = stats.ranks.size();
    stats.ranks.reserve(reps * fold->copies());
    for (size_t i = 0; i < reps; ++i) {
      for (int j = 1; j < fold->copies(); ++j) {
        record::RankSummary s = stats.ranks[i];
        s.rank = fold->Image(s.rank, j);
        stats.ranks.push_back(s);
      }
    }
  }
  std::sort(stats.ranks.begin(), stats.ranks.end(), [](const auto& a, const auto& b) {
    return std::tie(a.iteration, a.rank) < std::tie(b.iteration, b.rank);
  });
  for (const auto& s : stats.ranks) stats.end_ns = std::max(stats.end_ns, s.finish);
  stats.events = events;
  const sim_backend::SimCounters counters = backend->counters();
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
