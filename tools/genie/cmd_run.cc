// genie run: the main job — replay a training workload as real traffic. Every rank is a process
// that walks its Chakra graph with the same Executor as `genie simulate`, sleeps precisely for
// compute, and sends each collective's messages over the real network (TCP).
//
// Started by a launcher (genie launch, mpiexec, srun, torchrun), each process runs one rank.
// Started with no launcher around it, it launches the workload's ranks on this machine itself.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "genie/collective/planner.h"
#include "genie/config/network_config.h"
#include "genie/launch/local_launcher.h"
#include "genie/launch/rank_env.h"
#include "genie/net/interface_address.h"
#include "genie/record/recorder.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/provenance.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/statistics.h"
#include "genie/report/summary.h"
#include "genie/runtime/executor.h"
#include "genie/loop/precise_sleep.h"
#include "genie/runtime/real_backend.h"
#include "genie/runtime/simulation.h"
#include "tools/genie/cli_flags.h"
#include "tools/genie/command.h"

namespace genie::cli {
namespace {

namespace fs = std::filesystem;

struct RunFlags {
  runtime::SetupFlags setup;
  std::string output = "genie-results";
  std::string trace_out;
  std::string network_for_prediction;
  int iterations = 1;
  int warmup = 0;
  std::string bind = "127.0.0.1";
  std::string intra_host;  // network.yml of one host, modelled instead of sent
  std::string rendezvous;  // overrides the launcher's
  std::string clock_sync = "auto";
  std::string job_id;
  std::string tcp_congestion;
  std::string peer_timeout = "30s";
  int spin_us = -1;
  std::vector<std::string> argv;  // for the local self-launch
};

// Bit 62 of a tag is left free by the Executor; iteration barriers live there.
constexpr uint64_t kBarrierTagBit = 1ull << 62;

// Runs a world barrier (the planner's barrier collective) on the backend's loop.
class IterationDriver {
 public:
  IterationDriver(const RunFlags& flags, const runtime::RunSetup& setup,
                  runtime::RealBackend& backend, workload::RankGraph& graph,
                  record::Recorder& recorder)
      : flags_(flags),
        setup_(setup),
        backend_(backend),
        graph_(graph),
        recorder_(recorder),
        executor_(graph, setup.exec, backend, &recorder) {}

  Status Run() {
    total_ = flags_.warmup + flags_.iterations;
    started_ = backend_.Now();
    Barrier([this] { Next(); });
    Watchdog();
    backend_.Run();
    if (!status_.ok()) return status_;
    if (!backend_.status().ok()) {
      // Lost a peer: say also what this rank was waiting on when it happened.
      const Status& lost = backend_.status();
      std::string pending = running_ ? executor_.DescribePending() : "";
      if (pending.empty()) {
        pending = done_ == 0 ? "  the barrier before the first iteration\n"
                             : "  the barrier after iteration " + std::to_string(done_) + " of " +
                                   std::to_string(total_) + " (warm-ups included)\n";
      }
      return lost.WithDetail("this rank was waiting on:\n" + pending);
    }
    if (done_ != total_ + 1) {
      return Status::Internal("run ended after " + std::to_string(done_) + " of " +
                              std::to_string(total_) + " iterations");
    }
    return Status::Ok();
  }
  uint64_t verified() const { return executor_.verified(); }
  uint64_t unverifiable() const { return executor_.unverifiable(); }

 private:
  void Barrier(std::function<void()> then) {
    collective::CollectiveSpec spec;
    spec.type = CollectiveType::kBarrier;
    spec.group.resize(backend_.world_size());
    for (int r = 0; r < backend_.world_size(); ++r) spec.group[r] = r;
    auto schedule = collective::Plan(spec, backend_.rank());
    if (!schedule.ok()) {
      Stop(schedule.status());
      return;
    }
    const uint64_t tag = kBarrierTagBit | (static_cast<uint64_t>(barriers_++) << 32);
    barrier_ = std::make_unique<runtime::CollectiveRunner>(
        backend_, std::move(schedule).value(), tag, runtime::LocalCosts{}, 0,
        collective::SchedulingPolicy::kFifo, nullptr, std::move(then));
    barrier_->Start();
  }

  void Next() {
    ++done_;
    if (done_ > total_) {  // the closing barrier has passed: every rank has finished
      backend_.Stop();
      return;
    }
    const int iteration = done_ - 1 - flags_.warmup;  // negative = warm-up
    if (done_ > 1) graph_.Reset();
    running_ = true;
    iteration_start_ = backend_.Now();
    executor_.Start(iteration, [this, iteration](const Status& st) {
      running_ = false;
      if (!st.ok()) {
        Stop(st);
        return;
      }
      Progress(iteration);
      Barrier([this] { Next(); });
    });
  }

  // A rank whose graph has made no progress for the peer timeout is stuck: the peers it waits
  // for are alive (the transport would have said otherwise) but will never send. Say on what.
  // The limit is the peer timeout plus up to 2 s, so that a peer that went silent is named by
  // the transport's liveness check (which fires at the peer timeout) before this fires.
  void Watchdog() {
    const TimeNs timeout = timeout_ + std::min<TimeNs>(timeout_, 2 * kNsPerSec);
    backend_.After(kNsPerSec, [this, timeout] {
      if (done_ > total_ || !status_.ok()) return;
      const TimeNs idle = backend_.Now() - std::max(executor_.last_progress(), iteration_start_);
      if (running_ && idle > timeout) {
        Stop(Status::Timeout("no progress for " + FormatDuration(idle) +
                             " (--peer-timeout); still waiting:\n" + executor_.DescribePending()));
        return;
      }
      Watchdog();
    });
  }

  void Progress(int iteration) {
    if (backend_.rank() != 0 || !isatty(STDERR_FILENO)) return;
    const int finished = iteration + flags_.warmup + 1;
    const double elapsed = static_cast<double>(backend_.Now() - started_) / 1e9;
    const double eta = elapsed / finished * (total_ - finished);
    std::fprintf(stderr, "\rgenie run: %d/%d iterations%s, %.1f s elapsed, ~%.1f s to go   %s",
                 finished, total_, iteration < 0 ? " (warm-up)" : "", elapsed, eta,
                 finished == total_ ? "\n" : "");
  }

  void Stop(const Status& st) {
    if (status_.ok()) status_ = st;
    backend_.Stop();
  }

  const RunFlags& flags_;
  const runtime::RunSetup& setup_;
  runtime::RealBackend& backend_;
  workload::RankGraph& graph_;
  record::Recorder& recorder_;
  runtime::Executor executor_;
  std::unique_ptr<runtime::CollectiveRunner> barrier_;
  int total_ = 0;
  int done_ = 0;
  uint32_t barriers_ = 0;
  TimeNs started_ = 0;
  TimeNs iteration_start_ = 0;
  bool running_ = false;
  TimeNs timeout_ = 30 * kNsPerSec;
  Status status_;

 public:
  void set_timeout(TimeNs t) { timeout_ = t; }
};

// The prediction for the same workload on the modelled network, beside the measurement.
void PrintPrediction(const runtime::RunSetup& setup, const std::vector<record::RankSummary>& ranks,
                     const std::string& which) {
  if (!setup.network) return;
  auto predicted =
      runtime::Simulate(setup, *setup.network, sim::NetworkModelKind::kCongestionAware, nullptr);
  if (!predicted.ok()) {
    std::cerr << "genie run: prediction failed: " << predicted.status().message() << "\n";
    return;
  }
  auto steps = report::StepTimes(ranks);
  std::vector<TimeNs> measured;
  for (const auto& s : steps) {
    if (s.iteration >= 0) measured.push_back(s.step_ns());
  }
  auto spread = report::SpreadOf(measured);
  const double pred = static_cast<double>(predicted->end_ns);
  std::printf(
      "\nstep time  measured median %s%s   predicted (%s, congestion-aware) %s   "
      "measured/predicted %.2f\n",
      FormatDuration(spread.median).c_str(), which.c_str(), setup.network->path.c_str(),
      FormatDuration(predicted->end_ns).c_str(),
      pred > 0 ? static_cast<double>(spread.median) / pred : 0.0);
}

std::string StreamPath(const RunFlags& f, int rank) {
  return f.output + "/rank-" + std::to_string(rank) + ".jsonl";
}

// True when `rank`'s stream in the output folder was written by this run (its clock record,
// the second line, carries this run's id) — not left there by an earlier run.
bool StreamOfThisRun(const RunFlags& f, int rank, const std::string& run_id) {
  std::ifstream in(StreamPath(f, rank));
  std::string header, clock;
  if (!std::getline(in, header) || !std::getline(in, clock)) return false;
  auto j = nlohmann::json::parse(clock, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.value("record", "") == "clock" && j.value("run_id", "") == run_id;
}

// After the final barrier every rank's stream is complete. Each host (each output folder)
// merges the streams it holds into results.json: rank 0 when it sees all of them (one host, or
// a shared filesystem) with the summary and the prediction; otherwise rank 0 and the lowest
// rank of every other folder merge their own, for `genie results merge` to combine.
int WriteResults(const RunFlags& f, const runtime::RunSetup& setup, const launch::RankEnv& env,
                 const std::string& run_id) {
  if (env.rank != 0) {
    // Only the folder's lowest rank writes; on a shared folder that is rank 0. Looking at rank
    // 0 and then downwards keeps this to a file or two for most ranks of a large job.
    if (StreamOfThisRun(f, 0, run_id)) return 0;
    for (int r = env.rank - 1; r > 0; --r) {
      if (StreamOfThisRun(f, r, run_id)) return 0;
    }
  }
  std::vector<std::string> streams;
  std::vector<int> here;
  for (int r = 0; r < env.world_size; ++r) {
    if (StreamOfThisRun(f, r, run_id)) {
      streams.push_back(StreamPath(f, r));
      here.push_back(r);
    }
  }
  const bool complete = static_cast<int>(here.size()) == env.world_size;
  auto merged = report::MergeStreams(streams);
  if (!merged.ok()) {
    std::cerr << "genie run: " << merged.status().message() << "\n";
    return 1;
  }
  Status st =
      report::WriteJsonFile(f.output + "/results.json",
                            report::BuildResultsJson(merged->run_info, merged->ops, merged->ranks,
                                                     merged->clock_offsets_ns));
  if (!st.ok()) {
    std::cerr << "genie run: " << st.message() << "\n";
    return 1;
  }
  if (!f.trace_out.empty()) {
    st = report::WriteChromeTrace(f.trace_out, merged->ops);
    if (!st.ok()) std::cerr << "genie run: " << st.message() << "\n";
  }
  if (!complete) {
    std::fprintf(stderr,
                 "genie run: rank %d: %s/results.json holds this host's %zu of %d ranks (%d..%d); "
                 "combine every host's output folder with: genie results merge merged.json "
                 "HOST1_DIR HOST2_DIR ...\n",
                 env.rank, f.output.c_str(), here.size(), env.world_size, here.front(),
                 here.back());
    // Every iteration ends in a world barrier, so this host's step times are the job's.
    if (env.rank == 0) PrintPrediction(setup, merged->ranks, " (this host's ranks)");
    return 0;
  }
  // ASTRA-sim's lines over the measured iterations: T = wall time, E = T - GPU compute.
  std::vector<record::RankSummary> totals(env.world_size);
  for (int r = 0; r < env.world_size; ++r) totals[r].rank = r;
  for (const auto& s : merged->ranks) {
    if (s.iteration < 0 || s.rank < 0 || s.rank >= env.world_size) continue;
    auto& t = totals[s.rank];
    t.finish += s.finish - s.start;
    t.compute_ns += s.compute_ns;
    t.exposed_comm_ns += s.exposed_comm_ns;
  }
  report::PrintAstraSimLines(std::cout, totals);
  report::PrintSummary(std::cout, merged->ops, merged->ranks);
  report::PrintTraffic(std::cout, merged->run_info.value("traffic", nlohmann::json()));

  PrintPrediction(setup, merged->ranks, "");
  return 0;
}

int RunRank(const RunFlags& f, const launch::RankEnv& env) {
  auto setup = runtime::PrepareRun(f.setup);
  if (!setup.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << setup.status().message() << "\n";
    return 2;
  }
  setup->exec.comm_streams = runtime::ExecutorConfig::CommStreams::kConcurrent;
  if (setup->world_size() != env.world_size) {
    std::cerr << "genie run: the workload has " << setup->world_size() << " ranks but the "
              << "launcher started " << env.world_size << "; start one process per rank\n";
    return 2;
  }
  if (env.rank == 0) {
    for (const auto& note : setup->notes) std::cerr << "genie run: " << note << "\n";
  }
  std::error_code ec;
  fs::create_directories(f.output, ec);

  runtime::RealBackendOptions opt;
  opt.rank = env.rank;
  opt.world_size = env.world_size;
  opt.job_id = env.job_id.empty() ? "genie" : env.job_id;
  opt.rendezvous = env.rendezvous;
  auto bind = net::ResolveBindAddress(f.bind, env.local_rank);
  if (!bind.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": --bind: " << bind.status().message() << "\n";
    return 2;
  }
  opt.bind_addr = *bind;
  opt.channels = f.setup.channels;
  opt.tcp_congestion = f.tcp_congestion;
  opt.carry_data = f.setup.verify;
  opt.always_sync_clock = f.clock_sync == "always";
  if (!f.intra_host.empty()) {
    auto host = config::LoadNetworkConfig(f.intra_host);
    if (!host.ok()) {
      std::cerr << "genie run: --intra-host: " << host.status().message() << "\n";
      return 2;
    }
    // A machine may stand in for several hosts (a test bed), never for part of one.
    if (env.local_world_size > 0 && env.local_world_size % host->total_npus() != 0) {
      std::cerr << "genie run: rank " << env.rank << ": --intra-host " << f.intra_host
                << " models hosts of " << host->total_npus() << " ranks but the launcher "
                << "started " << env.local_world_size << " on this machine; start a multiple of "
                << host->total_npus() << " per machine\n";
      return 2;
    }
    opt.intra_host = std::move(*host);
  }
  auto timeout = ParseDuration(f.peer_timeout);
  if (!timeout.ok()) {
    std::cerr << "genie run: --peer-timeout: " << timeout.status().message() << "\n";
    return 2;
  }
  opt.peer_timeout = *timeout;
  const int local = env.local_world_size > 0 ? env.local_world_size : env.world_size;
  auto policy = loop::DefaultSleepPolicy(local, f.spin_us > 0 ? f.spin_us : 0);
  opt.spin = f.spin_us == 0 ? false : policy.spin;
  opt.spin_us = static_cast<int>(policy.margin / kNsPerUs);

  nlohmann::json transport = {{"name", "tcp"},
                              {"channels", opt.channels},
                              {"bind", opt.bind_addr},
                              {"tcp_congestion", opt.tcp_congestion},
                              {"peer_timeout_ns", opt.peer_timeout},
                              {"spin", opt.spin},
                              {"spin_us", opt.spin_us}};
  if (opt.intra_host) transport["intra_host"] = opt.intra_host->ToJson();
  nlohmann::json header = report::Provenance(setup->ToJson(), transport, f.argv);
  header["command"] = "run";
  header["rank"] = env.rank;
  header["world_size"] = env.world_size;
  header["job_id"] = opt.job_id;
  header["launcher"] = env.source;
  header["iterations"] = f.iterations;
  header["warmup"] = f.warmup;
  auto recorder = record::Recorder::Create(StreamPath(f, env.rank), header);
  if (!recorder.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << recorder.status().message() << "\n";
    return 1;
  }
  auto graph = workload::RankGraph::Open(setup->files.rank_paths[env.rank], env.rank, setup->read);
  if (!graph.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << graph.status().message() << "\n";
    return 2;
  }
  auto backend = runtime::RealBackend::Create(opt);
  if (!backend.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << backend.status().message() << "\n";
    // Bad input (an address, a host layout) is this rank's to report; the rest is the peers'.
    return backend.status().code() == Status::Code::kInvalidArgument ? 2 : launch::kExitPeerFailed;
  }
  const auto& clock = (*backend)->clock();
  (*recorder)->Note("clock", {{"rank", env.rank},
                              {"reference_rank", 0},
                              {"run_id", (*backend)->run_id()},
                              {"listen", (*backend)->listen_address()},
                              {"offset_ns", clock.offset_ns},
                              {"rtt_ns", clock.rtt_ns},
                              {"samples", clock.samples},
                              {"host_id", (*backend)->host_ids()[static_cast<size_t>(env.rank)]}});
  IterationDriver driver(f, *setup, **backend, **graph, **recorder);
  driver.set_timeout(opt.peer_timeout);
  Status st = driver.Run();
  nlohmann::json peers = nlohmann::json::array();
  for (int peer = 0; peer < env.world_size; ++peer) {
    const auto& t = (*backend)->traffic(peer);
    if (t.network_messages_sent + t.modelled_messages_sent == 0) continue;
    peers.push_back({{"peer", peer},
                     {"socket_bytes_sent", (*backend)->counters(peer).bytes_sent},
                     {"network_bytes_sent", t.network_bytes_sent},
                     {"network_messages_sent", t.network_messages_sent},
                     {"modelled_bytes_sent", t.modelled_bytes_sent},
                     {"modelled_messages_sent", t.modelled_messages_sent}});
  }
  (*recorder)->Note("traffic", {{"rank", env.rank}, {"peers", peers}});
  (*recorder)->Close();
  if (!st.ok()) (*backend)->Abort(st);
  if (!st.ok()) {
    std::cerr << "genie run: rank " << env.rank << ": " << st.message() << "\n";
    return st.code() == Status::Code::kUnavailable || st.code() == Status::Code::kTimeout
               ? launch::kExitPeerFailed
               : 1;
  }
  // Connections per peer, read before the orderly shutdown closes them.
  std::string connections;
  for (int peer = 0; peer < env.world_size; ++peer) {
    if (peer == env.rank) continue;
    connections += " " + std::to_string((*backend)->counters(peer).connections);
  }
  Status shut = (*backend)->Shutdown();
  if (!shut.ok()) spdlog::warn("rank {}: shutdown: {}", env.rank, shut.message());
  if (f.setup.verify) {
    std::string unchecked;
    if (driver.unverifiable() > 0) {
      unchecked = ", " + std::to_string(driver.unverifiable()) +
                  " not checked (size not a multiple of 4 bytes)";
    }
    std::fprintf(stderr,
                 "genie run: rank %d: verify: %llu collectives checked, all correct%s; "
                 "connections per peer:%s\n",
                 env.rank, static_cast<unsigned long long>(driver.verified()), unchecked.c_str(),
                 connections.c_str());
  }
  return WriteResults(f, *setup, env, (*backend)->run_id());
}

int RunCommand(RunFlags& f) {
  // The flags stand in for the variables, so they also reach self-launched ranks.
  if (!f.rendezvous.empty()) setenv("GENIE_RENDEZVOUS", f.rendezvous.c_str(), 1);
  if (!f.job_id.empty()) setenv("GENIE_JOB_ID", f.job_id.c_str(), 1);
  auto env = launch::DiscoverRankEnv();
  if (!env.ok()) {
    std::cerr << "genie run: " << env.status().message() << "\n";
    return 2;
  }
  if (env->source == "none") {
    // No launcher around us: start the workload's ranks on this machine.
    auto files = trace::FindWorkload(f.setup.workload, f.setup.comm_group);
    if (!files.ok()) {
      std::cerr << "genie run: " << files.status().message() << "\n";
      return 2;
    }
    if (files->world_size() > 1) {
      launch::LaunchOptions lo;
      lo.ranks = files->world_size();
      lo.argv = f.argv;
      lo.argv[0] = fs::read_symlink("/proc/self/exe").string();
      auto result = launch::RunLocalRanks(lo);
      if (!result.ok()) {
        std::cerr << "genie run: " << result.status().message() << "\n";
        return 1;
      }
      if (result->exit_code != 0) std::cerr << "genie run: " << result->message << "\n";
      return result->exit_code;
    }
  }
  return RunRank(f, *env);
}

}  // namespace

GENIE_COMMAND(run, "Replay a workload as real network traffic (the main job)") {
  auto f = std::make_shared<RunFlags>();
  AddWorkloadFlags(app, f->setup);
  app.add_option("--network,--network-configuration", f->setup.network_path,
                 "network.yml to predict the same workload with, printed beside the measurement");
  app.add_option("--topology", f->setup.topology, "Logical dimensions, e.g. 8x4 (dim 0 fastest)");
  app.add_option("--output,-o", f->output, "Folder for per-rank JSON lines and results.json");
  app.add_option("--trace-out", f->trace_out, "Write a Chrome trace (open in Perfetto)");
  app.add_option("--iterations,-n", f->iterations, "Measured iterations of the whole graph")
      ->check(CLI::PositiveNumber);
  app.add_option("--warmup", f->warmup, "Warm-up iterations (not in the statistics)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--verify", f->setup.verify, "Send real data, compute reductions, check results");
  app.add_option(
      "--bind,--iface", f->bind,
      "Address or interface (e.g. eth0) to listen on and send from; a comma list is "
      "mapped by local rank, like NCCL_SOCKET_IFNAME (eth0,eth1: one NIC per rank pair)");
  app.add_option("--intra-host", f->intra_host,
                 "network.yml of one host (e.g. 8 ranks on a 900 GB/s switch): traffic between "
                 "ranks of a host is modelled, only inter-host traffic is sent");
  app.add_option("--rendezvous", f->rendezvous,
                 "tcp:HOST:PORT (store on rank 0) or dir:PATH; default: from the launcher "
                 "(GENIE_RENDEZVOUS, MASTER_ADDR/MASTER_PORT)");
  app.add_option("--clock-sync", f->clock_sync,
                 "auto: measure clock offsets to rank 0 only on other machines; always: also on "
                 "rank 0's (where the truth is 0: a check of the estimate)")
      ->check(CLI::IsMember({"auto", "always"}));
  app.add_option("--job-id", f->job_id,
                 "Job id checked in every connection (default: the launcher's, or derived)");
  app.add_option("--tcp-congestion", f->tcp_congestion, "TCP congestion control (e.g. cubic, bbr)");
  app.add_option("--peer-timeout", f->peer_timeout, "Give up on a silent peer after this long");
  app.add_option("--spin-us", f->spin_us,
                 "Spin this many µs before each compute deadline (0 = never; default: only "
                 "when this machine's ranks fit on its cores)");
  return [f] {
    f->argv = ProcessArgv();
    return RunCommand(*f);
  };
}

}  // namespace genie::cli
