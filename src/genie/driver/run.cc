#include "genie/driver/run.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "genie/collective/planner.h"
#include "genie/compute/compute_fault.h"
#include "genie/compute/faulted_compute.h"
#include "genie/config/network_config.h"
#include "genie/driver/iteration_driver.h"
#include "genie/driver/localize.h"
#include "genie/driver/rank_backend.h"
#include "genie/driver/run_results.h"
#include "genie/driver/testbed_session.h"
#include "genie/driver/watchdog.h"
#include "genie/launch/local_launcher.h"
#include "genie/loop/precise_sleep.h"
#include "genie/net/fd_limit.h"
#include "genie/real_backend/real_backend.h"
#include "genie/record/cpu_steal.h"
#include "genie/record/cpu_wait.h"
#include "genie/record/host_settings.h"
#include "genie/record/output_guard.h"
#include "genie/record/recorder.h"
#include "genie/record/run_folder.h"
#include "genie/record/tcp_timeouts.h"
#include "genie/report/provenance.h"
#include "genie/runtime/peer_set.h"
#include "genie/runtime/remote_memory.h"
#include "genie/testbed/fault.h"

namespace genie::driver {
namespace {

// A rank's error on stderr, "genie run: rank N: ...", unless the message already opens with its
// rank (errors from the transport and executor name it themselves).
void SayRankError(int rank, const std::string& message) {
  const std::string own = "rank " + std::to_string(rank);
  const bool named = message.rfind(own, 0) == 0 && message.size() > own.size() &&
                     (message[own.size()] == ':' || message[own.size()] == ' ' ||
                      message[own.size()] == ',');
  // One write: the ranks of a job share the terminal, and pieces would interleave.
  const std::string line = "genie run: " + (named ? "" : own + ": ") + message + "\n";
  std::cerr << line << std::flush;
}

namespace fs = std::filesystem;

// When this process started, on CLOCK_MONOTONIC: /proc/self/stat's start time (clock ticks
// since boot) against CLOCK_BOOTTIME, which counts from boot as well. 0 if unreadable.
TimeNs ProcessStart() {
  std::ifstream in("/proc/self/stat");
  std::string stat;
  std::getline(in, stat);
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  // Field 3 (state) is the first after the name; starttime is field 22.
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i != 22) continue;
    const long ticks = sysconf(_SC_CLK_TCK);
    timespec boot{};
    if (ticks <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0) return 0;
    const TimeNs since_boot = static_cast<TimeNs>(boot.tv_sec) * kNsPerSec + boot.tv_nsec;
    const TimeNs started = static_cast<TimeNs>(std::stoll(field)) * (kNsPerSec / ticks);
    return loop::MonotonicNow() - (since_boot - started);
  }
  return 0;
}

// When genie launch started the job (GENIE_LAUNCH_TIME_NS, CLOCK_REALTIME), on this process's
// CLOCK_MONOTONIC; 0 when not launched by genie launch.
TimeNs LaunchStart() {
  const char* text = std::getenv("GENIE_LAUNCH_TIME_NS");
  if (text == nullptr || *text == '\0') return 0;
  timespec real{};
  clock_gettime(CLOCK_REALTIME, &real);
  const TimeNs now_real = static_cast<TimeNs>(real.tv_sec) * kNsPerSec + real.tv_nsec;
  return loop::MonotonicNow() - (now_real - static_cast<TimeNs>(std::strtoll(text, nullptr, 10)));
}

// The process's peak resident set (getrusage's ru_maxrss, KiB on Linux), in bytes.
uint64_t PeakRssBytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

// Rank 0 on a terminal shows how far the run is.
void PrintProgress(int finished, int total, bool warmup, TimeNs elapsed_ns) {
  const double elapsed = static_cast<double>(elapsed_ns) / 1e9;
  const double eta = elapsed / finished * (total - finished);
  std::fprintf(stderr, "\rgenie run: %d/%d iterations%s, %.1f s elapsed, ~%.1f s to go   %s",
               finished, total, warmup ? " (warm-up)" : "", elapsed, eta,
               finished == total ? "\n" : "");
}

// Drives the rank's iterations on the real backend until they end or fail; the status says
// also what the rank was waiting on when a peer was lost.
Status DriveIterations(const RunOptions& o, real_backend::RealBackend& backend,
                       IterationDriver& driver, TestbedSession* bed) {
  // The driver may still call back after this returns (Abort runs the loop once more, and a
  // due iteration then fails again): the callbacks hold their state, not this frame's.
  auto status = std::make_shared<Status>();
  real_backend::RealBackend* loop = &backend;
  auto stop = [status, loop](const Status& st) {
    if (status->ok()) *status = st;
    loop->Stop();
  };
  const TimeNs started = backend.Now();
  const bool progress = backend.rank() == 0 && isatty(STDERR_FILENO);
  if (progress || bed != nullptr) {
    driver.OnIteration([&, progress](int iteration) {
      if (bed != nullptr) bed->IterationEnded(iteration);
      if (progress) {
        PrintProgress(iteration + o.warmup + 1, driver.total(), iteration < 0,
                      backend.Now() - started);
      }
    });
  }
  if (bed != nullptr) bed->Begin();
  Watchdog watchdog(backend, driver, backend.options().peer_timeout, stop);
  driver.Start(stop);
  watchdog.Start();
  backend.Run();
  driver.OnIteration(nullptr);
  if (!status->ok()) return *status;
  if (!backend.status().ok()) {
    return backend.status().WithDetail("this rank was waiting on:\n" + driver.DescribeWaiting());
  }
  if (!driver.finished()) {
    return Status::Internal("run ended after " + std::to_string(driver.completed()) + " of " +
                            std::to_string(driver.total()) + " iterations");
  }
  return Status::Ok();
}

// Every file the run reads and writes, for the one output rule (record/output_guard.h): the
// streams of all ranks and results.json are its results; the trace, report and CSV derived.
Status CheckRunOutputs(const RunOptions& o, const trace::WorkloadFiles& files) {
  GENIE_RETURN_IF_ERROR(record::MakeOutputFolder(o.output));
  record::OutputPlan plan;
  plan.inputs = files.rank_paths;
  for (const std::string* in : {&files.comm_group_path, &o.setup.system_path,
                                &o.setup.network_path, &o.setup.memory_path, &o.intra_host,
                                &o.setup.faults, &o.baseline}) {
    plan.inputs.push_back(*in);
  }
  for (int r = 0; r < files.world_size(); ++r) {
    plan.results.push_back(record::StreamPath(o.output, r));
  }
  plan.results.push_back(o.output + "/results.json");
  plan.outputs = {o.trace_out, o.report, o.comparison_csv};
  plan.own_folders = {o.output};  // its claim is taken (or refused) by every rank
  return record::CheckOutputs(plan);
}

// A stall must end before the peers waiting on the stalled rank give up on it (watchdog.h).
Status CheckStalls(const runtime::ExecutorConfig& exec, TimeNs peer_timeout) {
  if (!exec.compute_faults) return Status::Ok();
  for (const auto& f : exec.compute_faults->faults) {
    if (f.kind == compute::ComputeFaultKind::kStall && f.stall >= peer_timeout) {
      return Status::InvalidArgument(
          exec.compute_faults->origin + ": fault " + std::to_string(f.entry) + " (" +
          f.Describe() + "): the stall is not shorter than --peer-timeout " +
          FormatDuration(peer_timeout) +
          ", so the peers would give up on the stalled rank; raise --peer-timeout above it");
    }
  }
  return Status::Ok();
}

}  // namespace

int RunRank(const RunOptions& o, const launch::RankEnv& env) {
  const TimeNs process_start = ProcessStart();
  const TimeNs launch_start = LaunchStart();
  net::RaiseFdLimit();
  auto setup = runtime::PrepareRun(o.setup);
  if (!setup.ok()) {
    SayRankError(env.rank, setup.status().message());
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
  if (Status out = CheckRunOutputs(o, setup->files); !out.ok()) {
    SayRankError(env.rank, out.message());
    return out.code() == Status::Code::kInvalidArgument ? 2 : 1;
  }

  auto identity = RankBackendOptions(env, o.bind);
  if (!identity.ok()) {
    SayRankError(env.rank, identity.status().message());
    return 2;
  }
  real_backend::RealBackendOptions opt = std::move(*identity);
  opt.channels = o.setup.channels;
  opt.tcp_congestion = o.tcp_congestion;
  opt.transport = o.transport;
  opt.carry_data = o.setup.verify;
  opt.always_sync_clock = o.clock_sync == "always";
  if (!o.intra_host.empty()) {
    auto host = config::LoadNetworkConfig(o.intra_host);
    if (!host.ok()) {
      std::cerr << "genie run: --intra-host: " << host.status().message() << "\n";
      return 2;
    }
    // A machine may stand in for several hosts (a test bed), never for part of one.
    if (env.local_world_size > 0 && env.local_world_size % host->total_npus() != 0) {
      std::cerr << "genie run: rank " << env.rank << ": --intra-host " << o.intra_host
                << " models hosts of " << host->total_npus() << " ranks but the launcher "
                << "started " << env.local_world_size << " on this machine; start a multiple of "
                << host->total_npus() << " per machine\n";
      return 2;
    }
    opt.intra_host = std::move(*host);
  }
  auto timeout = ParseDuration(o.peer_timeout);
  if (!timeout.ok()) {
    std::cerr << "genie run: --peer-timeout: " << timeout.status().message() << "\n";
    return 2;
  }
  opt.peer_timeout = *timeout;
  if (Status st = CheckStalls(setup->exec, *timeout); !st.ok()) {
    SayRankError(env.rank, st.message());
    return 2;
  }
  const int local = env.local_world_size > 0 ? env.local_world_size : env.world_size;
  auto policy = loop::DefaultSleepPolicy(local, o.spin_us > 0 ? o.spin_us : 0);
  opt.spin = o.spin_us == 0 ? false : policy.spin;
  opt.spin_us = static_cast<int>(policy.margin / kNsPerUs);

  nlohmann::json transport = {{"name", opt.transport.kind},
                              {"channels", opt.channels},
                              {"bind", opt.bind_addr},
                              {"tcp_congestion", opt.tcp_congestion},
                              {"peer_timeout_ns", opt.peer_timeout},
                              {"spin", opt.spin},
                              {"spin_us", opt.spin_us}};
  if (opt.transport.kind == "fabric") {
    transport["fabric_provider"] = opt.transport.fabric_provider;
    transport["fabric_domain"] = opt.transport.fabric_domain;
    transport["fabric_rma"] = opt.transport.fabric_rma;
  }
  if (opt.intra_host) transport["intra_host"] = opt.intra_host->ToJson();
  nlohmann::json header = report::Provenance(setup->ToJson(), transport, o.argv);
  header["command"] = "run";
  header["rank"] = env.rank;
  header["world_size"] = env.world_size;
  header["job_id"] = opt.job_id;
  header["launcher"] = env.source;
  header["iterations"] = o.iterations;
  header["warmup"] = o.warmup;
  // The congestion control and ECN this rank's connections run with, read in its host's
  // namespace (results.json's network_settings gathers them per host).
  header["host_settings"] = record::ReadHostSettings(HostLabel(), opt.tcp_congestion).ToJson();
  // No other job may write into this folder while this one runs (record/run_folder.h).
  auto claim = record::ClaimOutputFolder(o.output, opt.job_id, env.world_size);
  if (!claim.ok()) {
    SayRankError(env.rank, claim.status().message());
    return 2;
  }
  auto recorder = record::Recorder::Create(record::StreamPath(o.output, env.rank), header);
  if (!recorder.ok()) {
    SayRankError(env.rank, recorder.status().message());
    return 1;
  }
  auto graph = workload::RankGraph::Open(setup->files.rank_paths[env.rank], env.rank, setup->read);
  if (!graph.ok()) {
    SayRankError(env.rank, graph.status().message());
    return 2;
  }
  // Connect only the ranks this rank's plans use (runtime/peer_set.h), with the barrier's.
  auto planned = runtime::PlannedPeers(**graph, setup->exec);
  if (planned.ok()) {
    runtime::AddSchedulePeers(IterationDriver::TokenRingBarrier(env.world_size, env.rank), env.rank,
                              &*planned);
  }
  if (!planned.ok()) {
    SayRankError(env.rank, planned.status().message());
    return 2;
  }
  opt.peers = std::move(*planned);
  // On a testbed, rank 0 records its counters and plays the schedule's network faults (every
  // rank plays its own compute faults: setup->exec).
  std::unique_ptr<TestbedSession> bed;
  if (env.rank == 0 && (!o.testbed.empty() || !o.setup.faults.empty())) {
    auto opened =
        TestbedSession::Open(o.testbed, o.setup.faults, [] { return loop::MonotonicNow(); });
    if (!opened.ok()) {
      std::cerr << "genie run: " << opened.status().message() << "\n";
      return 2;
    }
    bed = std::move(*opened);  // null: compute faults only, no testbed
  }
  auto backend = real_backend::RealBackend::Create(opt);
  if (!backend.ok()) {
    SayRankError(env.rank, backend.status().message());
    // Bad input (an address, a host layout) is this rank's to report (2); a peer that failed
    // or never came is the peers' (75); the rest — the network here, this rank's own sockets —
    // is this rank's failure (1).
    const Status::Code code = backend.status().code();
    if (code == Status::Code::kInvalidArgument) return 2;
    return code == Status::Code::kUnavailable || code == Status::Code::kTimeout
               ? launch::kExitPeerFailed
               : 1;
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
  // On a testbed, its connections' addresses and ports, once connected (a leaf-spine hashing
  // ports too routes each by them: testbed/ecmp.h); written now, so a neighbour job's
  // prediction finds them. Elsewhere nothing reads them (and at scale they would be many).
  if (auto endpoints = o.testbed.empty() ? std::vector<net::ConnectionEndpoints>()
                                         : (*backend)->transport().connection_endpoints();
      !endpoints.empty()) {
    nlohmann::json conns = nlohmann::json::array();
    for (const net::ConnectionEndpoints& e : endpoints) {
      conns.push_back(
          {{"peer", e.peer}, {"channel", e.channel}, {"local", e.local}, {"remote", e.remote}});
    }
    (*recorder)->Note("connections", {{"rank", env.rank}, {"connections", std::move(conns)}});
  }
  // PER_NODE / POOL: the ranks of a queue share it through /dev/shm when they are all on this
  // host (runtime/remote_memory.h); otherwise each access takes its own time, and the first
  // rank of the queue says so.
  std::unique_ptr<runtime::RemoteMemory> remote_memory;
  if (setup->exec.memory.has_value()) {
    std::vector<std::string> notes;
    auto mem =
        runtime::RemoteMemory::OpenHostShared(*setup->exec.memory, env.world_size, env.rank,
                                              (*backend)->host_ids(), (*backend)->run_id(), &notes);
    if (!mem.ok()) {
      SayRankError(env.rank, mem.status().message());
      return 2;
    }
    const int q = setup->exec.memory->QueueOf(env.rank);
    if (env.rank == 0 || q != setup->exec.memory->QueueOf(env.rank - 1)) {
      for (const auto& note : notes) std::cerr << "genie run: " << note << "\n";
    }
    remote_memory = std::move(*mem);
    setup->exec.remote_memory = remote_memory.get();
  }
  IterationPolicy iterations;
  iterations.warmup = o.warmup;
  iterations.iterations = o.iterations;
  // This rank's executor also reads how long its thread waited for a core in each iteration;
  // the prediction's simulations (WriteResults) keep setup->exec as it is.
  runtime::ExecutorConfig exec = setup->exec;
  if (record::ReadThreadCpuTimes().has_value()) {
    exec.cpu_wait_clock = [] {
      const auto t = record::ReadThreadCpuTimes();
      return t ? t->wait_ns : TimeNs{0};
    };
  }
  // And its host's TCP retransmission timeouts (a /proc read before the first iteration and as
  // each ends); a read that fails keeps the last one.
  if (const auto first = record::ReadTcpTimeouts()) {
    exec.tcp_timeouts_counter = [last = *first]() mutable {
      if (const auto t = record::ReadTcpTimeouts()) last = *t;
      return last;
    };
    exec.host_id = record::HostId();
  }
  // And bbr's PROBE_RTT on its connections (zeros on other congestion controls).
  exec.probe_rtt_counter = [&transport = (*backend)->transport()] {
    const net::ProbeRttTotals t = transport.probe_rtt();
    return record::ProbeRttReading{t.episodes, t.ns, t.last_begin};
  };
  IterationDriver driver(iterations, exec, **backend, **graph, recorder->get());
  const auto cpu_before = record::ReadCpuTicks();
  Status st = DriveIterations(o, **backend, driver, bed.get());
  const nlohmann::json cpu = record::CpuStealJson(cpu_before, record::ReadCpuTicks());
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
  // Scale figures: what the rank held and how long it took to start (docs/metrics.md).
  const real_backend::StartupTimes& times = (*backend)->startup();
  const TimeNs first_op = driver.first_start();
  nlohmann::json startup = {{"rendezvous_ns", times.rendezvous},
                            {"connect_ns", times.connect},
                            {"clock_sync_ns", times.clock_sync}};
  if (first_op > 0) {
    startup["ready_to_first_op_ns"] = first_op - times.ready;
    if (process_start > 0) startup["process_to_first_op_ns"] = first_op - process_start;
    if (launch_start > 0) startup["launch_to_first_op_ns"] = first_op - launch_start;
  }
  (*recorder)->Note("traffic", {{"rank", env.rank},
                                {"peers", peers},
                                {"connected_peers", (*backend)->peers()},
                                {"connections", (*backend)->connections()},
                                {"startup", startup},
                                {"peak_rss_bytes", PeakRssBytes()},
                                {"cpu_steal", cpu}});
  if (setup->exec.compute_faults) {
    (*recorder)->Note("compute_faults",
                      {{"rank", env.rank},
                       {"events", compute::ToJson(driver.executor().ComputeFaultEvents())}});
  }
  // While the network is as the run left it (the testbed's faults are cleared by End()).
  if (st.ok() && o.localize) {
    LocalizeOptions lo;
    lo.host = HostLabel();
    lo.testbed = o.testbed;
    auto row = ProbeUsedLinks(**backend, lo);
    if (row.ok()) {
      (*recorder)->Note("localize", std::move(*row));
    } else {
      st = row.status();
    }
  }
  if (bed != nullptr) (*recorder)->Note("testbed", bed->End());
  (*recorder)->Close();
  if (st.ok() && env.world_size > 1) {
    // Shutdown waits for the connected peers' goodbyes only (not a world barrier unless all
    // are connected), and results.json is merged from every rank's stream: meet once more so
    // that every stream is closed before any rank merges. Every rank meets, whatever its own
    // peer count: a rank connected to all (rank 0 syncing clocks) skipping the token ring
    // would leave the others waiting for it.
    bool met = false;
    driver.WorldBarrier([&] {
      met = true;
      (*backend)->Stop();
    });
    (*backend)->Run();
    if (!met) {
      st = (*backend)->status().ok() ? Status::Internal("the closing barrier did not complete")
                                     : (*backend)->status();
    }
  }
  if (!st.ok()) {
    (*backend)->Abort(st);
    SayRankError(env.rank, st.message());
    // A workload the run cannot accept (a MEM_LOAD without memory model) is bad input, as in
    // `genie simulate`.
    if (st.code() == Status::Code::kInvalidArgument) return 2;
    return st.code() == Status::Code::kUnavailable || st.code() == Status::Code::kTimeout
               ? launch::kExitPeerFailed
               : 1;
  }
  // Connections per connected peer, read before the orderly shutdown closes them.
  std::string connections, connected;
  for (int peer : (*backend)->peers()) {
    connections += " " + std::to_string((*backend)->counters(peer).connections);
    connected += (connected.empty() ? "" : " ") + std::to_string(peer);
  }
  Status shut = (*backend)->Shutdown();
  if (!shut.ok()) spdlog::warn("rank {}: shutdown: {}", env.rank, shut.message());
  if (o.setup.verify) {
    const uint64_t unverifiable = driver.executor().unverifiable();
    std::string unchecked;
    if (unverifiable > 0) {
      unchecked = ", " + std::to_string(unverifiable) + " not checked (size not a multiple of 4 bytes)";
    }
    std::fprintf(stderr,
                 "genie run: rank %d: verify: %llu collectives checked, all correct%s; "
                 "connections per peer:%s (to ranks %s of %d)\n",
                 env.rank, static_cast<unsigned long long>(driver.executor().verified()),
                 unchecked.c_str(), connections.c_str(), connected.c_str(), env.world_size);
  }
  return WriteResults(o, *setup, env, (*backend)->run_id());
}

int Run(const RunOptions& o) {
  // The options stand in for the variables, so they also reach self-launched ranks.
  if (!o.rendezvous.empty()) setenv("GENIE_RENDEZVOUS", o.rendezvous.c_str(), 1);
  if (!o.job_id.empty()) setenv("GENIE_JOB_ID", o.job_id.c_str(), 1);
  auto env = launch::DiscoverRankEnv();
  if (!env.ok()) {
    std::cerr << "genie run: " << env.status().message() << "\n";
    return 2;
  }
  if (env->source == "none") {
    // No launcher around us: start the workload's ranks on this machine.
    auto files = trace::FindWorkload(o.setup.workload, o.setup.comm_group);
    if (!files.ok()) {
      std::cerr << "genie run: " << files.status().message() << "\n";
      return 2;
    }
    if (files->world_size() > 1) {
      // Refused once here rather than by every rank.
      if (Status out = CheckRunOutputs(o, *files); !out.ok()) {
        std::cerr << "genie run: " << out.message() << "\n";
        return out.code() == Status::Code::kInvalidArgument ? 2 : 1;
      }
      if (!o.setup.faults.empty()) {
        auto faults = compute::LoadComputeFaults(o.setup.faults);
        Status st = faults.ok() ? compute::CheckRanks(*faults, files->world_size())
                                : faults.status();
        if (st.ok()) st = testbed::LoadFaultSchedule(o.setup.faults).status();
        if (!st.ok()) {
          std::cerr << "genie run: " << st.message() << "\n";
          return 2;
        }
      }
      launch::LaunchOptions lo;
      lo.ranks = files->world_size();
      lo.argv = o.argv;
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
  return RunRank(o, *env);
}

}  // namespace genie::driver
