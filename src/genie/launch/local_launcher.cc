#include "genie/launch/local_launcher.h"

#include <signal.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/launch/launch_guardian.h"
#include "genie/launch/rank_env.h"

namespace genie::launch {

namespace {

// How long a witness's failure waits for the cause's before the others are stopped.
constexpr TimeNs kWitnessSettle = 2 * kNsPerSec;

std::string Describe(int wstatus) {
  if (WIFEXITED(wstatus)) return fmt::format("exit code {}", WEXITSTATUS(wstatus));
  if (WIFSIGNALED(wstatus)) {
    return fmt::format("killed by signal {} ({})", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
  }
  return "stopped";
}

// A rank that exits 75 only saw a peer go; one that we stopped ourselves (SIGTERM/SIGKILL after
// stop_others) did not fail either. Neither is the cause.
bool IsWitness(int wstatus) { return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == kExitPeerFailed; }

int ExitCodeOf(int wstatus) {
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

}  // namespace

std::string MakeLaunchNonce() {
  uint64_t x = 0;
  if (getrandom(&x, sizeof(x), 0) != static_cast<ssize_t>(sizeof(x))) {
    // No entropy source: pid and a nanosecond clock still differ between two launches.
    x = (static_cast<uint64_t>(getpid()) << 40) ^ static_cast<uint64_t>(env::Env::Default()->Now());
  }
  return fmt::format("{:016x}", x);
}

void RestoreDefaultSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM}) {
    sigaction(sig, &dfl, nullptr);
    sigaddset(&set, sig);
  }
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

Result<LaunchResult> RunLocalRanks(const LaunchOptions& o, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  if (o.ranks < 1) return Status::InvalidArgument("genie launch: -n must be at least 1");
  if (o.argv.empty()) return Status::InvalidArgument("genie launch: nothing to run after --");
  if (o.nodes < 1 || o.node_rank < 0 || o.node_rank >= o.nodes) {
    return Status::InvalidArgument(fmt::format(
        "genie launch: --node-rank {} is outside --nnodes {}", o.node_rank, o.nodes));
  }
  if (o.nodes > 1 && o.rendezvous.empty()) {
    return Status::InvalidArgument(
        "genie launch: with --nnodes > 1 every node needs the same --rendezvous "
        "(tcp:NODE0_HOST:PORT, or a directory all nodes share)");
  }
  const int first = o.node_rank * o.ranks;
  const int world = o.nodes * o.ranks;

  std::string spec = o.rendezvous;
  if (!spec.empty() && spec.rfind("tcp:", 0) != 0 && spec.rfind("dir:", 0) != 0) {
    spec = "dir:" + spec;
  }
  if (Status st = CheckRendezvousSpec(spec); !st.ok()) {
    return Status::InvalidArgument("--rendezvous: " + st.message());
  }
  std::string dir = spec.rfind("dir:", 0) == 0 ? spec.substr(4) : "";
  bool own_dir = spec.empty();
  if (own_dir) {
    auto made = env->CreateTempDir("genie-launch-");
    if (!made.ok()) {
      return Status::IoError(fmt::format(
          "cannot create a rendezvous directory genie-launch-XXXXXX in the temporary directory: {}",
          made.status().message()));
    }
    dir = *made;
    spec = "dir:" + dir;
  }
  // One launch, one nonce: the ranks carry it to the rendezvous, which refuses ranks of another
  // launch claiming the same ranks. On one node it is also the job id, so two launches never
  // share one; nodes cannot agree on a nonce without talking, so there the job id comes from
  // the rendezvous they share and rank 0's store tells the launches apart (net/rendezvous.h).
  const std::string nonce = MakeLaunchNonce();
  std::string job = o.job_id;
  if (job.empty() && o.nodes > 1) {
    job = fmt::format("launch-{:x}", std::hash<std::string>{}(spec));
  } else if (job.empty()) {
    job = "launch-" + nonce;
  }

  // An inherited SIG_IGN would still reach the signalfd (blocked signals are queued), but the
  // children would inherit it too: start from the defaults.
  RestoreDefaultSignals();
  // Children's exits and SIGINT/SIGTERM to us, as one stream (a signalfd for the real Env).
  auto made_group = env->NewProcessGroup();
  if (!made_group.ok()) {
    return Status::IoError(fmt::format("signalfd: {}", made_group.status().message()));
  }
  std::unique_ptr<env::ProcessGroup> group = std::move(made_group).value();

  std::vector<pid_t> pids(static_cast<size_t>(o.ranks), -1);
  std::vector<bool> running(static_cast<size_t>(o.ranks), false);
  int alive = 0;
  LaunchResult result;
  TimeNs kill_at = -1;       // when to escalate (settle -> SIGTERM, SIGTERM -> SIGKILL)
  bool stopping = false;     // SIGTERM (or a forwarded signal) went to the others
  bool settling = false;     // only witnesses have failed so far; waiting for the cause
  bool interrupted = false;  // the launcher was told to stop: that is the outcome
  bool cause_is_witness = false;
  int cause_status = 0;
  int stopped_others = 0;
  std::string also;  // the other failures, for the message
  int also_count = 0;
  auto note_also = [&](int rank, int wstatus) {
    if (++also_count > 8) {
      if (also_count == 9) also += ", ...";
      return;
    }
    also += fmt::format("{}rank {} {}", also.empty() ? "" : ", ", rank, Describe(wstatus));
  };
  auto stop_others = [&](int sig) {
    for (int r = 0; r < o.ranks; ++r) {
      if (running[static_cast<size_t>(r)]) group->Signal(pids[static_cast<size_t>(r)], sig);
    }
  };

  // Start-up time in the results is measured from here (CLOCK_REALTIME: children convert).
  const std::string launch_time = std::to_string(env->NowWall());
  const pid_t launcher = getpid();
  // The ranks die with the launcher, however it dies (real processes only: a scripted rank's
  // pid names nobody).
  LaunchGuardian guardian;
  const bool guard = group->RealProcesses();
  for (int r = 0; r < o.ranks; ++r) {
    env::ProcessSpec child;
    child.argv = o.argv;
    child.who = fmt::format("genie launch: rank {}", r);
    child.before_exec = [launcher] { ArmParentDeathSignal(launcher); };
    child.env = {{"GENIE_RANK", std::to_string(first + r)},
                 {"GENIE_WORLD_SIZE", std::to_string(world)},
                 {"GENIE_LOCAL_RANK", std::to_string(r)},
                 {"GENIE_LOCAL_WORLD_SIZE", std::to_string(o.ranks)},
                 {"GENIE_RENDEZVOUS", spec},
                 {"GENIE_JOB_ID", job},
                 {"GENIE_LAUNCH_NONCE", nonce},
                 {"GENIE_LAUNCH_TIME_NS", launch_time}};
    if (static_cast<size_t>(r) < o.sites.size()) {
      const RankSite& site = o.sites[static_cast<size_t>(r)];
      child.netns = site.netns;
      child.env.insert(child.env.end(), site.env.begin(), site.env.end());
    }
    auto pid = group->Spawn(child);
    if (!pid.ok()) {
      result.exit_code = 1;
      result.message = fmt::format("fork for rank {} failed: {}", r, pid.status().message());
      interrupted = true;  // keeps this message
      stopping = true;
      stop_others(SIGTERM);
      kill_at = env->Now() + o.grace;
      break;
    }
    pids[static_cast<size_t>(r)] = *pid;
    running[static_cast<size_t>(r)] = true;
    ++alive;
    if (guard) guardian.Watch(*pid);
  }
  if (guard && alive > 0 && !guardian.Start(o.grace)) {
    spdlog::warn("genie launch: cannot start the guardian that stops the ranks should the "
                 "launcher be killed ({}); they still get SIGTERM when it dies",
                 strerror(errno));
  }

  while (alive > 0) {
    const env::ProcessEvent event = group->Wait(kill_at);
    if (event.kind == env::ProcessEvent::Kind::kTimeout) {  // kill_at has come
      if (settling) {  // no cause came forward: stop the rest as for any failure
        settling = false;
        stopping = true;
        stopped_others = alive;
        stop_others(SIGTERM);
        kill_at = env->Now() + o.grace;
        continue;
      }
      spdlog::warn("genie launch: ranks still running {} after SIGTERM; sending SIGKILL",
                   FormatDuration(o.grace));
      stop_others(SIGKILL);
      kill_at = -1;
      continue;
    }
    if (event.kind == env::ProcessEvent::Kind::kSignal) {
      const int sig = event.signal;
      spdlog::warn("genie launch: got {}; forwarding to {} rank(s)", strsignal(sig), alive);
      stop_others(sig);
      if (!interrupted && result.failed_rank < 0) {
        interrupted = true;
        result.exit_code = 128 + sig;
        result.message = fmt::format("interrupted by {}", strsignal(sig));
      }
      stopping = true;
      if (kill_at < 0 || settling) kill_at = env->Now() + o.grace;
      settling = false;
      continue;
    }
    // Children that exited, reaped together (signals coalesce).
    std::vector<std::pair<int, int>> failed;  // (rank, wait status) in this batch
    for (const auto& [pid, wstatus] : event.exited) {
      int r = -1;
      for (int i = 0; i < o.ranks; ++i) {
        if (pids[static_cast<size_t>(i)] == pid) r = i;
      }
      if (r < 0 || !running[static_cast<size_t>(r)]) continue;
      running[static_cast<size_t>(r)] = false;
      --alive;
      if (!(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) failed.emplace_back(r, wstatus);
    }
    if (failed.empty() || interrupted) continue;
    // A rank we stopped ourselves is no failure of its own.
    if (stopping) {
      failed.erase(std::remove_if(failed.begin(), failed.end(),
                                  [](const auto& f) {
                                    return WIFSIGNALED(f.second) &&
                                           (WTERMSIG(f.second) == SIGTERM ||
                                            WTERMSIG(f.second) == SIGKILL);
                                  }),
                   failed.end());
    }
    // The cause first: a rank that did not merely report a lost peer, then the lowest rank.
    std::sort(failed.begin(), failed.end(), [&](const auto& x, const auto& y) {
      if (IsWitness(x.second) != IsWitness(y.second)) return !IsWitness(x.second);
      return x.first < y.first;
    });
    for (const auto& [r, wstatus] : failed) {
      const bool witness = IsWitness(wstatus);
      // A witness is named only until a cause shows up; the first cause stays.
      if (result.failed_rank >= 0 && (!cause_is_witness || witness)) {
        note_also(first + r, wstatus);
        continue;
      }
      if (result.failed_rank >= 0) note_also(result.failed_rank, cause_status);
      result.failed_rank = first + r;
      result.exit_code = ExitCodeOf(wstatus);
      cause_status = wstatus;
      cause_is_witness = witness;
    }
    if (stopping) continue;
    if (cause_is_witness) {
      // Every rank that saw a peer go exits 75 within moments, often before the peer that
      // failed is reaped: give the cause a moment to exit on its own before stopping anyone.
      if (kill_at < 0) kill_at = env->Now() + std::min<TimeNs>(o.grace, kWitnessSettle);
      settling = true;
      continue;
    }
    stopped_others = alive;
    stopping = true;
    settling = false;
    stop_others(SIGTERM);
    kill_at = env->Now() + o.grace;
  }
  if (result.failed_rank >= 0 && !interrupted) {
    result.message = fmt::format("rank {} failed: {}", result.failed_rank, Describe(cause_status));
    if (cause_is_witness) {
      result.message += fmt::format(
          " (it lost a peer; no rank on this node failed by itself: look for the cause in the "
          "other nodes' output)");
    }
    if (!also.empty()) result.message += " (then " + also + ")";
    if (stopped_others > 0) {
      result.message += fmt::format("; stopped the other {} rank(s)", stopped_others);
    }
  }
  guardian.Done();
  group.reset();  // gives SIGCHLD, SIGINT and SIGTERM back
  if (own_dir) (void)env->RemoveAll(dir);
  return result;
}

}  // namespace genie::launch
