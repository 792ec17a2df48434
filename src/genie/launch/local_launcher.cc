#include "genie/launch/local_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/random.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "genie/launch/launch_guardian.h"
#include "genie/launch/rank_env.h"

namespace genie::launch {

namespace {

// How long a witness's failure waits for the cause's before the others are stopped.
constexpr TimeNs kWitnessSettle = 2 * kNsPerSec;

TimeNs Now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

// Moves the forked child into its site (namespace, environment); exits it with
// kExitBadInput when the namespace cannot be entered. Runs in the forked child before exec.
void EnterSite(const RankSite& site, int r) {
  if (!site.netns.empty()) {
    const std::string path = "/var/run/netns/" + site.netns;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      fprintf(stderr, "genie launch: rank %d: cannot enter network namespace %s: %s (is the "
              "testbed up? `genie testbed list`; entering one needs root)\n",
              r, site.netns.c_str(), strerror(errno));
      _exit(kExitBadInput);
    }
    close(fd);
  }
  for (const auto& [k, v] : site.env) setenv(k.c_str(), v.c_str(), 1);
}

// What a rank's program must start with: default dispositions and an empty mask, whatever the
// launcher inherited (a shell's `trap '' INT`, nohup, a batch system) — otherwise a forwarded
// SIGINT is ignored and the rank keeps measuring. Runs in the forked child before exec.
void ResetSignalsInChild() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    sigaction(sig, &dfl, nullptr);  // fails harmlessly for the numbers libc reserves
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

}  // namespace

std::string MakeLaunchNonce() {
  uint64_t x = 0;
  if (getrandom(&x, sizeof(x), 0) != static_cast<ssize_t>(sizeof(x))) {
    // No entropy source: pid and a nanosecond clock still differ between two launches.
    x = (static_cast<uint64_t>(getpid()) << 40) ^ static_cast<uint64_t>(Now());
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

Result<LaunchResult> RunLocalRanks(const LaunchOptions& o) {
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
    std::string tmpl = (std::filesystem::temp_directory_path() / "genie-launch-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return Status::IoError(fmt::format("cannot create a rendezvous directory {}: {}", tmpl,
                                         strerror(errno)));
    }
    dir = tmpl;
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
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, &old_mask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return Status::IoError(fmt::format("signalfd: {}", strerror(errno)));
  }

  std::vector<char*> args;
  for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

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
      if (running[static_cast<size_t>(r)]) kill(pids[static_cast<size_t>(r)], sig);
    }
  };

  // Start-up time in the results is measured from here (CLOCK_REALTIME: children convert).
  timespec launched{};
  clock_gettime(CLOCK_REALTIME, &launched);
  const std::string launch_time =
      std::to_string(static_cast<int64_t>(launched.tv_sec) * 1000000000 + launched.tv_nsec);
  const pid_t launcher = getpid();
  LaunchGuardian guardian;  // the ranks die with the launcher, however it dies
  for (int r = 0; r < o.ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      result.exit_code = 1;
      result.message = fmt::format("fork for rank {} failed: {}", r, strerror(errno));
      interrupted = true;  // keeps this message
      stopping = true;
      stop_others(SIGTERM);
      kill_at = Now() + o.grace;
      break;
    }
    if (pid == 0) {
      ResetSignalsInChild();
      ArmParentDeathSignal(launcher);
      setenv("GENIE_RANK", std::to_string(first + r).c_str(), 1);
      setenv("GENIE_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("GENIE_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("GENIE_LOCAL_WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      setenv("GENIE_RENDEZVOUS", spec.c_str(), 1);
      setenv("GENIE_JOB_ID", job.c_str(), 1);
      setenv("GENIE_LAUNCH_NONCE", nonce.c_str(), 1);
      setenv("GENIE_LAUNCH_TIME_NS", launch_time.c_str(), 1);
      if (static_cast<size_t>(r) < o.sites.size()) EnterSite(o.sites[static_cast<size_t>(r)], r);
      execvp(args[0], args.data());
      fprintf(stderr, "genie launch: rank %d: cannot run %s: %s\n", r, args[0], strerror(errno));
      _exit(127);
    }
    pids[static_cast<size_t>(r)] = pid;
    running[static_cast<size_t>(r)] = true;
    ++alive;
    guardian.Watch(pid);
  }
  if (alive > 0 && !guardian.Start(o.grace)) {
    spdlog::warn("genie launch: cannot start the guardian that stops the ranks should the "
                 "launcher be killed ({}); they still get SIGTERM when it dies",
                 strerror(errno));
  }

  while (alive > 0) {
    int timeout_ms = -1;
    if (kill_at >= 0) {
      TimeNs left = kill_at - Now();
      timeout_ms = left <= 0 ? 0 : static_cast<int>(left / kNsPerMs + 1);
    }
    pollfd p{sfd, POLLIN, 0};
    int n = poll(&p, 1, timeout_ms);
    if (n == 0 && kill_at >= 0 && Now() >= kill_at) {
      if (settling) {  // no cause came forward: stop the rest as for any failure
        settling = false;
        stopping = true;
        stopped_others = alive;
        stop_others(SIGTERM);
        kill_at = Now() + o.grace;
        continue;
      }
      spdlog::warn("genie launch: ranks still running {} after SIGTERM; sending SIGKILL",
                   FormatDuration(o.grace));
      stop_others(SIGKILL);
      kill_at = -1;
      continue;
    }
    if (n <= 0) continue;
    signalfd_siginfo si;
    if (read(sfd, &si, sizeof(si)) != static_cast<ssize_t>(sizeof(si))) continue;
    if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
      int sig = static_cast<int>(si.ssi_signo);
      spdlog::warn("genie launch: got {}; forwarding to {} rank(s)", strsignal(sig), alive);
      stop_others(sig);
      if (!interrupted && result.failed_rank < 0) {
        interrupted = true;
        result.exit_code = 128 + sig;
        result.message = fmt::format("interrupted by {}", strsignal(sig));
      }
      stopping = true;
      if (kill_at < 0 || settling) kill_at = Now() + o.grace;
      settling = false;
      continue;
    }
    // SIGCHLD: reap everything that has exited (signals coalesce).
    std::vector<std::pair<int, int>> failed;  // (rank, wait status) in this batch
    while (true) {
      int wstatus = 0;
      pid_t pid = waitpid(-1, &wstatus, WNOHANG);
      if (pid <= 0) break;
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
      if (kill_at < 0) kill_at = Now() + std::min<TimeNs>(o.grace, kWitnessSettle);
      settling = true;
      continue;
    }
    stopped_others = alive;
    stopping = true;
    settling = false;
    stop_others(SIGTERM);
    kill_at = Now() + o.grace;
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
  close(sfd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (own_dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return result;
}

}  // namespace genie::launch
