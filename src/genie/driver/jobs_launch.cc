#include "genie/driver/jobs_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "genie/driver/jobs_spec.h"
#include "genie/driver/testbed_placement.h"
#include "genie/driver/traffic.h"
#include "genie/launch/launch_guardian.h"
#include "genie/launch/local_launcher.h"
#include "genie/record/output_guard.h"
#include "genie/report/atomic_file.h"
#include "genie/testbed/control.h"

namespace genie::driver {

namespace {

namespace fs = std::filesystem;

// After the supervisors were told to stop, how long beyond their own grace before SIGKILL.
constexpr TimeNs kSupervisorSlack = 10 * kNsPerSec;
// Where automatic rendezvous ports start (as a single `genie launch --testbed`'s).
constexpr int kFirstPort = 29500;

struct PreparedJobs {
  JobsSpec spec;
  std::optional<testbed::Layout> layout;  // none: loopback
};

// The file, read, given its outputs and placed; every refusal happens here, before anything runs.
Result<PreparedJobs> PrepareJobs(const JobsLaunchOptions& o) {
  auto spec = LoadJobsSpec(o.jobs_path);
  if (!spec.ok()) return spec.status();
  PreparedJobs p{std::move(*spec), std::nullopt};
  if (!o.output.empty()) GENIE_RETURN_IF_ERROR(SetJobsOutput(o.output, &p.spec));
  if (!o.testbed.empty()) p.spec.testbed = o.testbed;
  if (p.spec.testbed.empty()) {
    GENIE_RETURN_IF_ERROR(PlaceJobs({"local"}, 1, &p.spec));
    return p;
  }
  auto layout = testbed::Load(p.spec.testbed);
  if (!layout.ok()) {
    return Status::InvalidArgument(fmt::format("{}: testbed {}: {}", p.spec.path,
                                               p.spec.testbed, layout.status().message()));
  }
  std::vector<std::string> hosts;
  for (const testbed::Host& h : layout->hosts) hosts.push_back(h.name);
  GENIE_RETURN_IF_ERROR(PlaceJobs(hosts, static_cast<int>(layout->hosts.at(0).nics.size()), &p.spec));
  p.layout = std::move(*layout);
  return p;
}

// tcp:<rank 0's address>:<port> on a testbed; on loopback a fresh directory unless a port is set.
std::string RendezvousFor(const PreparedJobs& p, const JobSpec& job, int port) {
  if (!p.layout) return port > 0 ? fmt::format("tcp:127.0.0.1:{}", port) : "";
  const testbed::Host& h0 = p.layout->hosts.at(static_cast<size_t>(job.rank_host.at(0)));
  return fmt::format("tcp:{}:{}", h0.nics.at(static_cast<size_t>(job.rank_nic.at(0))).address, port);
}

std::string HostsText(const JobsSpec& spec, const JobSpec& job) {
  std::string s;
  if (job.type == JobType::kTraffic) {
    for (const auto& [a, b] : job.traffic.pairs) {
      s += fmt::format("{}{}>{}", s.empty() ? "" : ",", spec.hosts[static_cast<size_t>(a)],
                       spec.hosts[static_cast<size_t>(b)]);
    }
    return s;
  }
  std::vector<int> seen;
  for (int h : job.rank_host) {
    if (std::find(seen.begin(), seen.end(), h) == seen.end()) seen.push_back(h);
  }
  for (int h : seen) s += (s.empty() ? "" : ",") + spec.hosts[static_cast<size_t>(h)];
  return s;
}

std::string KindOf(const JobSpec& job) { return job.subcommand; }

// 0 -> "0s", 500 ms -> "0.5s", 2 s -> "2s".
std::string SecondsText(TimeNs ns) {
  std::string s = fmt::format("{:.3f}", static_cast<double>(ns) / kNsPerSec);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + "s";
}

// The job's lifecycle under the launcher.
struct JobRun {
  const JobSpec* job = nullptr;
  enum class State { kPending, kRunning, kEnded, kNotStarted } state = State::kPending;
  int pid = -1;
  int wstatus = 0;
  bool stopped = false;  // we told it to stop (signal, stop_all, open-ended traffic)
  bool stopped_when_done = false;  // open-ended traffic stopped after the workloads: success
  bool skipped = false;  // open-ended traffic not started: the workloads had ended
  TimeNs start_wall = 0, end_wall = 0, start_mono = 0, end_mono = 0;
  std::string rendezvous, job_id, log;
  int exit_code() const {
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  }
  bool ok() const {
    return skipped || (state == State::kEnded && (exit_code() == 0 || stopped_when_done));
  }
  std::string Outcome() const {
    switch (state) {
      case State::kPending:
      case State::kNotStarted: return skipped ? "not started (workloads done)" : "not started";
      case State::kRunning: return "running";
      case State::kEnded: break;
    }
    if (stopped_when_done) return "0 (stopped: workloads done)";
    if (WIFSIGNALED(wstatus)) return fmt::format("{} (killed: {})", exit_code(), strsignal(WTERMSIG(wstatus)));
    const int c = exit_code();
    if (c == 0) return "0";
    if (stopped) return fmt::format("{} (stopped)", c);
    if (c == launch::kExitPeerFailed) return fmt::format("{} (lost a peer)", c);
    if (c > 128) return fmt::format("{} (a rank got {})", c, strsignal(c - 128));
    return fmt::format("{} (failed)", c);
  }
};

void PrintTail(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.erase(last.begin());
  }
  for (const std::string& l : last) fmt::print(stderr, "    {}\n", l);
}

void PrintTable(const JobsSpec& spec, const std::vector<JobRun>& runs) {
  struct Row {
    std::string c[8];
  };
  std::vector<Row> rows = {{{"job", "kind", "ranks", "hosts", "start", "time", "exit", "results"}}};
  for (const JobRun& r : runs) {
    const JobSpec& j = *r.job;
    std::string hosts = HostsText(spec, j);
    if (hosts.size() > 40) hosts = hosts.substr(0, 37) + "...";
    const bool ran = r.state == JobRun::State::kEnded;
    rows.push_back({{j.name, KindOf(j), std::to_string(j.ranks), hosts, SecondsText(j.start_ns),
                     ran ? fmt::format("{:.1f}s", static_cast<double>(r.end_mono - r.start_mono) / kNsPerSec) : "-",
                     r.Outcome(), JobResultsPath(j)}});
  }
  size_t width[8] = {};
  for (const Row& row : rows) {
    for (int i = 0; i < 8; ++i) width[i] = std::max(width[i], row.c[i].size());
  }
  for (const Row& row : rows) {
    std::string line;
    for (int i = 0; i < 8; ++i) {
      line += i == 7 ? row.c[i] : fmt::format("{:<{}}  ", row.c[i], width[i]);
    }
    fmt::print("{}\n", line);
  }
  std::fflush(stdout);
}

Status WriteSummary(const PreparedJobs& p, const std::vector<JobRun>& runs, int exit_code) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRun& r : runs) {
    const JobSpec& j = *r.job;
    nlohmann::json hosts = nlohmann::json::array();
    for (int h : j.rank_host) hosts.push_back(p.spec.hosts[static_cast<size_t>(h)]);
    nlohmann::json e = {{"name", j.name},
                        {"kind", KindOf(j)},
                        {"ranks", j.ranks},
                        {"rank_hosts", hosts},
                        {"rank_nics", j.rank_nic},
                        {"start_offset_ns", j.start_ns},
                        {"output", j.output},
                        {"results", JobResultsPath(j)},
                        {"log", r.log},
                        {"job_id", r.job_id},
                        {"rendezvous", r.rendezvous},
                        {"outcome", r.Outcome()},
                        {"ok", r.ok()}};
    if (r.state == JobRun::State::kEnded) {
      e["started_ns"] = r.start_wall;
      e["ended_ns"] = r.end_wall;
      e["exit_code"] = r.stopped_when_done ? 0 : r.exit_code();
    }
    jobs.push_back(e);
  }
  nlohmann::json out = {{"jobs_file", p.spec.path},
                        {"testbed", p.spec.testbed},
                        {"slots_per_host", p.spec.slots_per_host},
                        {"exit_code", exit_code},
                        {"jobs", jobs}};
  GENIE_RETURN_IF_ERROR(record::MakeOutputFolder(p.spec.output));
  return report::WriteFileAtomically((fs::path(p.spec.output) / "jobs.json").string(),
                                     out.dump(1) + "\n");
}

}  // namespace

int LaunchOneJob(const JobsLaunchOptions& o) {
  auto p = PrepareJobs(o);
  if (!p.ok()) {
    fmt::print(stderr, "genie launch: {}\n", p.status().message());
    return launch::kExitBadInput;
  }
  const JobSpec* job = p->spec.Find(o.only_job);
  if (job == nullptr) {
    std::string names;
    for (const JobSpec& j : p->spec.jobs) names += (names.empty() ? "" : ", ") + j.name;
    fmt::print(stderr, "genie launch: {}: no job named '{}' (it has {})\n", p->spec.path,
               o.only_job, names);
    return launch::kExitBadInput;
  }
  if (Status st = record::MakeOutputFolder(job->output); !st.ok()) {
    fmt::print(stderr, "genie launch: job '{}': {}\n", job->name, st.message());
    return launch::kExitBadInput;
  }
  if (!o.log.empty()) {
    const int fd = open(o.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
      fmt::print(stderr, "genie launch: job '{}': cannot write its log {}: {}\n", job->name, o.log,
                 strerror(errno));
      return launch::kExitBadInput;
    }
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  launch::LaunchOptions lo;
  lo.ranks = job->ranks;
  lo.grace = o.grace;
  lo.job_id = !o.job_id.empty() ? o.job_id : job->name + "-" + launch::MakeLaunchNonce().substr(0, 8);
  lo.rendezvous = !o.rendezvous.empty() ? o.rendezvous
                                        : RendezvousFor(*p, *job, job->port > 0 ? job->port
                                                                                : kFirstPort + getpid() % 400);
  lo.argv.push_back(SelfExe());
  for (const std::string& a : JobCommand(*job)) lo.argv.push_back(a);
  for (int r = 0; r < job->ranks; ++r) {
    launch::RankSite site;
    // Started by `genie launch --jobs`, the launcher named the jobs it runs; run alone by a
    // user's --job, this job is the only one.
    const char* started = std::getenv(kJobsStartedEnv);
    site.env = {{kJobsFileEnv, p->spec.path},
                {kJobNameEnv, job->name},
                {kJobsStartedEnv, started != nullptr ? started : job->name},
                {kJobsOutputEnv, fs::absolute(p->spec.output).string()}};
    if (p->layout) {
      const testbed::Host& host = p->layout->hosts.at(static_cast<size_t>(job->rank_host[static_cast<size_t>(r)]));
      site.netns = host.netns;
      const auto& nic = host.nics.at(static_cast<size_t>(job->rank_nic[static_cast<size_t>(r)]));
      site.env.insert(site.env.end(), {{"GENIE_BIND", nic.address},
                                       {"GENIE_TESTBED", p->spec.testbed},
                                       {"GENIE_HOST", host.name}});
    }
    lo.sites.push_back(site);
  }
  fmt::print(stderr, "genie launch: job '{}': {} rank(s) on {}: genie {}\n", job->name, job->ranks,
             HostsText(p->spec, *job), fmt::join(JobCommand(*job), " "));
  std::fflush(stderr);
  auto r = launch::RunLocalRanks(lo);
  int code = 0;
  if (!r.ok()) {
    fmt::print(stderr, "genie launch: job '{}': {}\n", job->name, r.status().message());
    code = launch::kExitBadInput;
  } else if (r->exit_code != 0) {
    fmt::print(stderr, "genie launch: job '{}': {}\n", job->name, r->message);
    code = r->exit_code;
  }
  if (job->type == JobType::kTraffic) {
    if (Status st = WriteTrafficResults(p->spec, *job); !st.ok()) {
      fmt::print(stderr, "genie launch: job '{}': {}\n", job->name, st.message());
      if (code == 0) code = launch::kExitFailed;
    }
  }
  return code;
}

int LaunchJobs(const JobsLaunchOptions& o, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  auto prepared = PrepareJobs(o);
  if (!prepared.ok()) {
    fmt::print(stderr, "genie launch: {}\n", prepared.status().message());
    return launch::kExitBadInput;
  }
  PreparedJobs& p = *prepared;
  if (Status st = record::MakeOutputFolder(p.spec.output); !st.ok()) {
    fmt::print(stderr, "genie launch: {}\n", st.message());
    return launch::kExitBadInput;
  }
  // Ports: each job its own, the file's first, the others counted up from a per-launcher base.
  std::set<int> taken;
  for (const JobSpec& j : p.spec.jobs) {
    if (j.port > 0) taken.insert(j.port);
  }
  int next_port = kFirstPort + env->ProcessId() % 400;
  const std::string nonce = launch::MakeLaunchNonce().substr(0, 8);
  std::vector<JobRun> runs;
  for (const JobSpec& j : p.spec.jobs) {
    JobRun r;
    r.job = &j;
    int port = j.port;
    if (port == 0 && p.layout) {
      while (taken.count(next_port)) ++next_port;
      port = next_port++;
    }
    r.rendezvous = RendezvousFor(p, j, port);
    r.job_id = j.name + "-" + nonce;
    r.log = (fs::path(j.output) / "launch.log").string();
    runs.push_back(r);
  }

  launch::RestoreDefaultSignals();
  auto made = env->NewProcessGroup();
  if (!made.ok()) {
    fmt::print(stderr, "genie launch: signalfd: {}\n", made.status().message());
    return launch::kExitFailed;
  }
  std::unique_ptr<env::ProcessGroup> group = std::move(made).value();
  const TimeNs t0 = env->Now();
  const pid_t self = getpid();
  int interrupted = 0;      // the signal that stopped the launch
  bool stopping_all = false;  // stop_all_on_failure fired
  TimeNs kill_at = -1;
  auto running = [&] {
    return std::count_if(runs.begin(), runs.end(),
                         [](const JobRun& r) { return r.state == JobRun::State::kRunning; });
  };
  auto stop = [&](JobRun& r, int sig) {
    if (r.state != JobRun::State::kRunning) return;
    r.stopped = true;
    group->Signal(r.pid, sig);
  };
  auto cancel_pending = [&] {
    for (JobRun& r : runs) {
      if (r.state == JobRun::State::kPending) r.state = JobRun::State::kNotStarted;
    }
  };
  auto open_ended = [](const JobSpec& j) {
    return j.type == JobType::kTraffic && j.traffic.duration_ns == 0 && j.traffic.bytes == 0;
  };
  // Once every workload job has ended, open-ended traffic has nothing left to load the network for.
  auto workloads_done = [&] {
    if (!p.spec.HasWorkload()) return false;
    for (const JobRun& r : runs) {
      if (r.job->type == JobType::kWorkload &&
          (r.state == JobRun::State::kPending || r.state == JobRun::State::kRunning)) {
        return false;
      }
    }
    return true;
  };

  // Every job of the file is started (open-ended traffic unless the workloads already ended).
  std::string started_names;
  for (const JobRun& r : runs) {
    started_names += (started_names.empty() ? "" : ",") + r.job->name;
  }
  fmt::print(stderr, "genie launch: {} job(s) from {} on {}; output in {}\n", runs.size(),
             p.spec.path, p.layout ? "testbed " + p.spec.testbed : "this machine (no testbed)",
             p.spec.output);
  while (true) {
    const TimeNs now = env->Now();
    // Start what is due.
    TimeNs next_start = -1;
    for (JobRun& r : runs) {
      if (r.state != JobRun::State::kPending) continue;
      if (open_ended(*r.job) && workloads_done()) {
        r.state = JobRun::State::kNotStarted;
        r.skipped = true;
        continue;
      }
      if (t0 + r.job->start_ns > now) {
        if (next_start < 0 || t0 + r.job->start_ns < next_start) next_start = t0 + r.job->start_ns;
        continue;
      }
      env::ProcessSpec child;
      child.argv = {SelfExe(), "launch", "--jobs", p.spec.path, "--job", r.job->name,
                    "--output", p.spec.output, "--job-id", r.job_id, "--job-log", r.log,
                    "--grace", std::to_string(o.grace) + "ns"};
      if (p.layout) child.argv.insert(child.argv.end(), {"--testbed", p.spec.testbed});
      if (!r.rendezvous.empty()) child.argv.insert(child.argv.end(), {"--rendezvous", r.rendezvous});
      child.env = {{kJobsStartedEnv, started_names}};
      child.who = fmt::format("genie launch: job '{}'", r.job->name);
      child.before_exec = [self] { launch::ArmParentDeathSignal(self); };
      std::error_code ec;
      fs::create_directories(r.job->output, ec);
      auto pid = group->Spawn(child);
      r.start_wall = env->NowWall();
      r.start_mono = env->Now();
      if (!pid.ok()) {
        fmt::print(stderr, "genie launch: job '{}': cannot start: {}\n", r.job->name, pid.status().message());
        r.state = JobRun::State::kEnded;
        r.wstatus = env::ExitedWith(launch::kExitFailed);
        r.end_wall = r.start_wall;
        r.end_mono = r.start_mono;
        continue;
      }
      r.pid = *pid;
      r.state = JobRun::State::kRunning;
      fmt::print(stderr, "genie launch: job '{}' started: {} {} rank(s) on {} (log: {})\n",
                 r.job->name, r.job->ranks, KindOf(*r.job), HostsText(p.spec, *r.job), r.log);
    }
    if (running() == 0 && next_start < 0) break;
    TimeNs deadline = next_start;
    if (kill_at >= 0 && (deadline < 0 || kill_at < deadline)) deadline = kill_at;
    const env::ProcessEvent ev = group->Wait(deadline);
    if (ev.kind == env::ProcessEvent::Kind::kTimeout) {
      if (kill_at >= 0 && env->Now() >= kill_at) {
        fmt::print(stderr, "genie launch: jobs still running {} after they were told to stop; "
                           "sending SIGKILL (their ranks die with them)\n",
                   FormatDuration(o.grace + kSupervisorSlack));
        for (JobRun& r : runs) stop(r, SIGKILL);
        kill_at = -1;
      }
      continue;
    }
    if (ev.kind == env::ProcessEvent::Kind::kSignal) {
      fmt::print(stderr, "genie launch: got {}; stopping {} running job(s)\n", strsignal(ev.signal), running());
      if (interrupted == 0) interrupted = ev.signal;
      cancel_pending();
      for (JobRun& r : runs) stop(r, ev.signal);
      if (kill_at < 0) kill_at = env->Now() + o.grace + kSupervisorSlack;
      continue;
    }
    for (const auto& [pid, wstatus] : ev.exited) {
      for (JobRun& r : runs) {
        if (r.state != JobRun::State::kRunning || r.pid != pid) continue;
        r.state = JobRun::State::kEnded;
        r.wstatus = wstatus;
        r.end_wall = env->NowWall();
        r.end_mono = env->Now();
        fmt::print(stderr, "genie launch: job '{}' ended after {:.1f} s: exit {}\n", r.job->name,
                   static_cast<double>(r.end_mono - r.start_mono) / kNsPerSec, r.Outcome());
        if (!r.ok() && !r.stopped) {
          fmt::print(stderr, "  the end of its log ({}):\n", r.log);
          PrintTail(r.log, 6);
          if (p.spec.stop_all_on_failure && !stopping_all && interrupted == 0) {
            stopping_all = true;
            fmt::print(stderr, "genie launch: stop_all_on_failure: stopping the other jobs\n");
            cancel_pending();
            for (JobRun& other : runs) stop(other, SIGTERM);
            kill_at = env->Now() + o.grace + kSupervisorSlack;
          }
        }
      }
    }
    if (workloads_done()) {
      for (JobRun& r : runs) {
        if (r.state == JobRun::State::kRunning && open_ended(*r.job) && !r.stopped) {
          r.stopped_when_done = true;
          stop(r, SIGTERM);
          if (kill_at < 0) kill_at = env->Now() + o.grace + kSupervisorSlack;
        }
      }
    }
  }
  group.reset();

  int code = 0;
  if (interrupted != 0) {
    code = 128 + interrupted;
  } else {
    for (const JobRun& r : runs) {
      if (r.state == JobRun::State::kEnded && !r.ok() && !r.stopped) {
        code = r.exit_code();
        break;
      }
    }
  }
  PrintTable(p.spec, runs);
  if (Status st = WriteSummary(p, runs, code); !st.ok()) {
    fmt::print(stderr, "genie launch: {}\n", st.message());
  }
  const auto failed = std::count_if(runs.begin(), runs.end(), [](const JobRun& r) { return !r.ok(); });
  if (code != 0 || failed > 0) {
    fmt::print(stderr, "genie launch: {} of {} job(s) did not succeed (exit {}); summary in {}\n",
               failed, runs.size(), code, (fs::path(p.spec.output) / "jobs.json").string());
  }
  return code;
}

}  // namespace genie::driver
