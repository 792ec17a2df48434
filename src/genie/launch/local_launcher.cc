#include "genie/launch/local_launcher.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace genie::launch {

namespace {

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

}  // namespace

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
  // Nodes agree on the job id without talking: derive it from the rendezvous they share.
  std::string job = o.job_id;
  if (job.empty() && o.nodes > 1) {
    job = fmt::format("launch-{:x}", std::hash<std::string>{}(spec));
  } else if (job.empty()) {
    job = fmt::format("launch-{}-{:x}", getpid(), static_cast<uint64_t>(Now()));
  }

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
  TimeNs kill_at = -1;
  auto stop_others = [&](int sig) {
    for (int r = 0; r < o.ranks; ++r) {
      if (running[static_cast<size_t>(r)]) kill(pids[static_cast<size_t>(r)], sig);
    }
  };

  for (int r = 0; r < o.ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      result.exit_code = 1;
      result.message = fmt::format("fork for rank {} failed: {}", r, strerror(errno));
      stop_others(SIGTERM);
      kill_at = Now() + o.grace;
      break;
    }
    if (pid == 0) {
      sigprocmask(SIG_SETMASK, &old_mask, nullptr);
      setenv("GENIE_RANK", std::to_string(first + r).c_str(), 1);
      setenv("GENIE_WORLD_SIZE", std::to_string(world).c_str(), 1);
      setenv("GENIE_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("GENIE_LOCAL_WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      setenv("GENIE_RENDEZVOUS", spec.c_str(), 1);
      setenv("GENIE_JOB_ID", job.c_str(), 1);
      execvp(args[0], args.data());
      fprintf(stderr, "genie launch: rank %d: cannot run %s: %s\n", r, args[0], strerror(errno));
      _exit(127);
    }
    pids[static_cast<size_t>(r)] = pid;
    running[static_cast<size_t>(r)] = true;
    ++alive;
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
      if (result.exit_code == 0) {
        result.exit_code = 128 + sig;
        result.message = fmt::format("interrupted by {}", strsignal(sig));
      }
      if (kill_at < 0) kill_at = Now() + o.grace;
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
    if (failed.empty() || result.failed_rank >= 0 || result.exit_code != 0) continue;
    // The cause first: a rank that did not merely report a lost peer, then the lowest rank.
    auto witness = [](int ws) { return WIFEXITED(ws) && WEXITSTATUS(ws) == kExitPeerFailed; };
    std::sort(failed.begin(), failed.end(), [&](const auto& x, const auto& y) {
      if (witness(x.second) != witness(y.second)) return !witness(x.second);
      return x.first < y.first;
    });
    auto [r, wstatus] = failed.front();
    result.failed_rank = first + r;
    result.exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    result.message = fmt::format("rank {} failed: {}", first + r, Describe(wstatus));
    for (size_t i = 1; i < failed.size(); ++i) {
      result.message += fmt::format("{}rank {} {}", i == 1 ? " (then " : ", ",
                                    first + failed[i].first, Describe(failed[i].second));
    }
    if (failed.size() > 1) result.message += ")";
    result.message += fmt::format("; stopping the other {} rank(s)", alive);
    stop_others(SIGTERM);
    kill_at = Now() + o.grace;
  }
  close(sfd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (own_dir) {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  return result;
}

}  // namespace genie::launch
