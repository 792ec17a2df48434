#include "genie/driver/jobs_simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <tuple>

#include "genie/common/logging.h"
#include "genie/driver/job_rank.h"
#include "genie/report/statistics.h"
#include "genie/runtime/remote_memory.h"
#include "genie/sim/host_slots.h"
#include "genie/sim_backend/sim_backend.h"

namespace genie::driver {
namespace {

// A traffic job's connection on the network model: messages sent while its window is open.
class TrafficPump {
 public:
  TrafficPump(sim_backend::SimBackend& sim, int src, int dst, uint16_t channel,
              const TrafficFlow& flow, TimeNs begin, const bool* workloads_done,
              SimJobResult* result)
      : sim_(sim), src_(src), dst_(dst), channel_(channel), flow_(flow), begin_(begin),
        left_(flow.bytes), workloads_done_(workloads_done), result_(result) {}

  void Start() {
    sim_.queue().At(begin_, [this] { Resume(); });
  }

 private:
  // Whether a message may leave now; when only an off period holds it back, `*resume_at` is
  // when the next on period starts.
  bool Open(TimeNs* resume_at) const {
    *resume_at = -1;
    const TimeNs now = sim_.Now();
    if (flow_.duration_ns > 0 && now >= begin_ + flow_.duration_ns) return false;
    if (flow_.bytes > 0 && left_ == 0) return false;
    if (flow_.duration_ns == 0 && flow_.bytes == 0 && *workloads_done_) return false;
    if (flow_.on_ns > 0 && flow_.off_ns > 0) {
      const TimeNs period = flow_.on_ns + flow_.off_ns;
      const TimeNs phase = (now - begin_) % period;
      if (phase >= flow_.on_ns) {
        *resume_at = now + period - phase;
        return false;
      }
    }
    return true;
  }
  // Sends what the window allows now: a paced sender one message per period, a bulk sender
  // until two are on its connection.
  void Resume() {
    TimeNs resume_at = -1;
    if (!Open(&resume_at)) {
      if (resume_at >= 0 && !waiting_) {
        waiting_ = true;
        sim_.queue().At(resume_at, [this] {
          waiting_ = false;
          Resume();
        });
      }
      return;
    }
    if (flow_.bytes_per_ns > 0) {
      Post();
      if (!ticking_) {
        ticking_ = true;
        const auto period = std::max<TimeNs>(
            1, static_cast<TimeNs>(static_cast<double>(kTrafficMessageBytes) / flow_.bytes_per_ns));
        sim_.queue().After(period, [this] {
          ticking_ = false;
          Resume();
        });
      }
      return;
    }
    while (in_flight_ < 2 && Open(&resume_at)) Post();
  }
  void Post() {
    Bytes bytes = kTrafficMessageBytes;
    if (flow_.bytes > 0) {
      bytes = std::min(bytes, left_);
      left_ -= bytes;
    }
    ++in_flight_;
    sim_.network().Transmit(src_, dst_, bytes, /*flow=*/0, channel_, [this, bytes] {
      --in_flight_;
      ++result_->messages;
      result_->bytes += bytes;
      result_->end_ns = std::max(result_->end_ns, sim_.Now());
      if (flow_.bytes_per_ns == 0) Resume();
    });
  }

  sim_backend::SimBackend& sim_;
  int src_, dst_;
  uint16_t channel_;
  TrafficFlow flow_;
  TimeNs begin_;
  Bytes left_;
  const bool* workloads_done_;
  SimJobResult* result_;
  int in_flight_ = 0;
  bool waiting_ = false;
  bool ticking_ = false;
};

struct WorkloadJob {
  std::vector<int> npu_of;  // by rank
  std::vector<std::unique_ptr<workload::RankGraph>> graphs;
  std::unique_ptr<runtime::RemoteMemory> memory;
  runtime::ExecutorConfig exec;
  std::vector<std::unique_ptr<JobRank>> views;
  std::vector<std::unique_ptr<IterationDriver>> drivers;
  int done = 0;
  Status error;
};

}  // namespace

TimeNs SimJobResult::MedianStep() const { return report::SpreadOf(step_ns).median; }

Result<JobsSimulation> SimulateJobs(const std::vector<SimJob>& jobs,
                                    const config::NetworkConfig& hosts,
                                    sim::NetworkModelKind model) {
  const int host_count = hosts.total_npus();
  // Slots: each rank, and each host a traffic job sends from or to, takes the next free slot of
  // its host, in the order the jobs are given.
  std::vector<int> used(static_cast<size_t>(host_count), 0);
  auto take = [&](const SimJob& job, int host, const std::string& what) -> Result<int> {
    if (host < 0 || host >= host_count) {
      return Status::InvalidArgument("job " + job.name + ": " + what + " is on host " +
                                     std::to_string(host) + " but " +
                                     (hosts.path.empty() ? "the network" : hosts.path) + " has " +
                                     std::to_string(host_count) +
                                     " hosts (NPUs); place it on hosts 0.." +
                                     std::to_string(host_count - 1));
    }
    return host + host_count * used[static_cast<size_t>(host)]++;  // slot, made an NPU below
  };
  std::vector<std::vector<int>> slot_of(jobs.size());  // per job: by rank, or by host (traffic)
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SimJob& job = jobs[j];
    if (job.setup != nullptr) {
      if (static_cast<int>(job.rank_host.size()) != job.setup->world_size()) {
        return Status::InvalidArgument("job " + job.name + ": " +
                                       std::to_string(job.rank_host.size()) +
                                       " ranks placed, its workload has " +
                                       std::to_string(job.setup->world_size()));
      }
      for (size_t r = 0; r < job.rank_host.size(); ++r) {
        GENIE_ASSIGN_OR_RETURN(int npu, take(job, job.rank_host[r], "rank " + std::to_string(r)));
        slot_of[j].push_back(npu);
      }
    } else {
      slot_of[j].assign(static_cast<size_t>(host_count), -1);
      for (const TrafficFlow& f : job.traffic) {
        for (int h : {f.src_host, f.dst_host}) {
          if (h >= 0 && h < host_count && slot_of[j][static_cast<size_t>(h)] >= 0) continue;
          GENIE_ASSIGN_OR_RETURN(int npu, take(job, h, "a traffic flow"));
          slot_of[j][static_cast<size_t>(h)] = npu;
        }
      }
    }
  }
  JobsSimulation out;
  out.slots = std::max(1, *std::max_element(used.begin(), used.end()));
  config::NetworkConfig world = sim::WithHostSlots(hosts, out.slots);
  // Each workload job's connections on their known spines, on the NPUs its ranks took.
  for (size_t j = 0; j < jobs.size() && world.leaf_spine.present(); ++j) {
    const std::vector<int>& npu = slot_of[j];
    for (config::EcmpConnection c : jobs[j].connection_spines) {
      if (jobs[j].setup == nullptr || c.src < 0 || c.dst < 0 ||
          c.src >= static_cast<int>(npu.size()) || c.dst >= static_cast<int>(npu.size())) {
        continue;
      }
      c.src = npu[static_cast<size_t>(c.src)];
      c.dst = npu[static_cast<size_t>(c.dst)];
      world.leaf_spine.connections.push_back(c);
    }
  }
  GENIE_ASSIGN_OR_RETURN(auto backend, sim_backend::SimBackend::Create(world, model, 0));
  if (out.slots > 1) GENIE_RETURN_IF_ERROR(backend->ShareHostLinks(host_count));
  bool cut = false;
  for (const SimJob& job : jobs) {
    if (job.setup != nullptr) {
      cut |= job.setup->exec.plan.slice_bytes != 0 || job.setup->exec.plan.channels > 1;
    }
  }
  backend->network().set_cut_messages(cut);

  out.jobs.resize(jobs.size());
  std::vector<std::unique_ptr<WorkloadJob>> workloads(jobs.size());
  std::vector<std::unique_ptr<TrafficPump>> pumps;
  // Ranks of workload jobs still running; traffic without an end of its own stops with them.
  int running = 0;
  for (const SimJob& job : jobs) {
    if (job.setup != nullptr) running += job.setup->world_size();
  }
  bool workloads_done = running == 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SimJob& job = jobs[j];
    SimJobResult& result = out.jobs[j];
    result.name = job.name;
    result.start_ns = job.start_ns;
    result.end_ns = job.start_ns;
    if (job.setup == nullptr) {
      for (size_t i = 0; i < job.traffic.size(); ++i) {
        const TrafficFlow& f = job.traffic[i];
        if (f.duration_ns <= 0 && f.bytes == 0 && workloads_done) {
          return Status::InvalidArgument("job " + job.name +
                                         ": traffic with neither a duration nor bytes ends with "
                                         "the workload jobs, and there are none; give it one");
        }
        // Its ranks connect as the job starts (bbr's probes count from then, flow_model.h).
        for (int h : {f.src_host, f.dst_host}) {
          backend->network().set_opened_at(slot_of[j][static_cast<size_t>(h)],
                                           static_cast<double>(job.start_ns));
        }
        pumps.push_back(std::make_unique<TrafficPump>(
            *backend, slot_of[j][static_cast<size_t>(f.src_host)],
            slot_of[j][static_cast<size_t>(f.dst_host)], static_cast<uint16_t>(i), f,
            job.start_ns + f.start_ns, &workloads_done, &result));
      }
      continue;
    }
    const runtime::RunSetup& setup = *job.setup;
    auto w = std::make_unique<WorkloadJob>();
    w->npu_of = slot_of[j];
    const int n = setup.world_size();
    for (int r = 0; r < n; ++r) {
      auto g = workload::RankGraph::Open(setup.files.rank_paths[r], r, setup.read);
      if (!g.ok()) return g.status().WithContext("job " + job.name);
      for (const auto& warning : (*g)->warnings()) {
        WarnOnce(fmt::format("job {} rank {}: {}", job.name, r, warning));
      }
      w->graphs.push_back(std::move(*g));
    }
    w->exec = setup.exec;
    if (!w->exec.memory.has_value()) {
      w->exec.memory = config::MemoryConfig{};
      w->exec.memory->path = "the default memory model (no --memory given)";
    }
    std::vector<std::string> notes;
    GENIE_ASSIGN_OR_RETURN(w->memory,
                           runtime::RemoteMemory::CreateSimulated(*w->exec.memory, n, &notes));
    w->exec.remote_memory = w->memory.get();
    for (int r = 0; r < n; ++r) {
      backend->network().set_opened_at(w->npu_of[r], static_cast<double>(job.start_ns));
      w->views.push_back(std::make_unique<JobRank>(backend->ForRank(w->npu_of[r]), w->npu_of, r,
                                                   0x9e3779b97f4a7c15ULL * (j + 1)));
      w->drivers.push_back(std::make_unique<IterationDriver>(job.iterations, w->exec,
                                                             *w->views.back(), *w->graphs[r],
                                                             /*recorder=*/nullptr));
    }
    for (int r = 0; r < n; ++r) {
      IterationDriver& d = *w->drivers[r];
      WorkloadJob* wj = w.get();
      d.OnIteration([&result, driver = &d](int) {
        result.ranks.push_back(driver->executor().summary());
      });
      auto start = [driver = &d, wj, &running, &workloads_done] {
        driver->Start([wj, &running, &workloads_done](const Status& st) {
          ++wj->done;
          if (!st.ok() && wj->error.ok()) wj->error = st;
          workloads_done = --running == 0;
        });
      };
      backend->queue().At(job.start_ns, start);
    }
    workloads[j] = std::move(w);
  }
  for (auto& p : pumps) p->Start();
  out.events = backend->Run();
  out.end_ns = backend->Now();
  if (!backend->status().ok()) return backend->status();
  for (size_t j = 0; j < jobs.size(); ++j) {
    WorkloadJob* w = workloads[j].get();
    if (w == nullptr) continue;
    const std::string& name = jobs[j].name;
    if (!w->error.ok()) return w->error.WithContext("job " + name);
    const int n = static_cast<int>(w->drivers.size());
    if (w->done < n) {
      std::ostringstream msg;
      msg << "job " << name << ": deadlock: the simulation ran out of events at "
          << backend->Now() << " ns with " << (n - w->done) << " of " << n
          << " ranks unfinished. Waiting:\n";
      int shown = 0;
      for (const auto& d : w->drivers) {
        if (!d->finished() && shown++ < 16) msg << d->DescribeWaiting();
      }
      msg << "Check that the job's traces agree (genie inspect).";
      return Status::Internal(msg.str());
    }
    SimJobResult& result = out.jobs[j];
    std::sort(result.ranks.begin(), result.ranks.end(), [](const auto& a, const auto& b) {
      return std::tie(a.iteration, a.rank) < std::tie(b.iteration, b.rank);
    });
    for (const auto& s : result.ranks) result.end_ns = std::max(result.end_ns, s.finish);
    for (const report::IterationStep& s : report::StepTimes(result.ranks)) {
      result.step_ns.push_back(s.step_ns());
    }
  }
  // When the last job ended: the queue may run on past it (a bbr probe's check due later,
  // sim/flow_model.h), which is no job's time.
  TimeNs last = 0;
  for (const SimJobResult& r : out.jobs) last = std::max(last, r.end_ns);
  if (last > 0) out.end_ns = std::min(out.end_ns, last);
  return out;
}

}  // namespace genie::driver
