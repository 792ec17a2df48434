#include "genie/launch/launch_guardian.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace genie::launch {

namespace {

// Through syscall(2): Debian 12's <sys/pidfd.h> declares these without C linkage.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
void PidfdSignal(int pidfd, int sig) { syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0); }

TimeNs MonotonicNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<TimeNs>(t.tv_sec) * kNsPerSec + t.tv_nsec;
}

// The guardian's body, after fork: wait for the launcher's word or its death, then stop the
// ranks. Only async-signal-safe calls (the launcher may have had other threads' locks).
// `p` is allocated before the fork, one entry a pidfd.
[[noreturn]] void Guard(int pipe_read, const std::vector<int>& pidfds, std::vector<pollfd>& p,
                        TimeNs grace) {
  signal(SIGINT, SIG_IGN);  // a terminal's Ctrl-C reaches the launcher's group: outlive it
  signal(SIGTERM, SIG_IGN);
  char word = 0;
  ssize_t n;
  while ((n = read(pipe_read, &word, 1)) < 0 && errno == EINTR) {
  }
  if (n == 1 && word == 'd') _exit(0);
  // The launcher is gone without a word: stop what it started.
  for (int fd : pidfds) PidfdSignal(fd, SIGTERM);
  const TimeNs deadline = MonotonicNs() + grace;
  while (true) {
    size_t live = 0;
    for (size_t i = 0; i < p.size(); ++i) p[i] = {pidfds[i], POLLIN, 0};
    const TimeNs left = deadline - MonotonicNs();
    if (left <= 0) break;
    if (poll(p.data(), p.size(), static_cast<int>(left / kNsPerMs + 1)) < 0 && errno != EINTR) {
      break;
    }
    for (size_t i = 0; i < p.size(); ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) ++live;
    }
    if (live == 0) _exit(0);
  }
  for (int fd : pidfds) PidfdSignal(fd, SIGKILL);
  _exit(0);
}

}  // namespace

void ArmParentDeathSignal(pid_t launcher) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != launcher) _exit(128 + SIGTERM);  // it died before we asked
}

LaunchGuardian::~LaunchGuardian() { Done(); }

void LaunchGuardian::Watch(pid_t rank) {
  // A fork just made and not yet reaped: the pid is still the rank's. Close-on-exec is implied.
  const int fd = PidfdOpen(rank);
  if (fd >= 0) pidfds_.push_back(fd);
}

bool LaunchGuardian::Start(TimeNs grace) {
  int fds[2];
  if (pidfds_.empty() || pipe2(fds, O_CLOEXEC) != 0) return false;
  std::vector<int> keep = pidfds_;  // allocated before the fork, as is `polls`
  keep.push_back(fds[0]);
  std::sort(keep.begin(), keep.end());
  std::vector<pollfd> polls(pidfds_.size());
  const pid_t pid = fork();
  if (pid == 0) {
    // Keep the pipe's read end and the pidfds, nothing else: an inherited socket or signalfd
    // of the launcher's would outlive it here.
    int next = 3;
    for (int fd : keep) {
      if (fd > next) close_range(static_cast<unsigned>(next), static_cast<unsigned>(fd - 1), 0);
      next = fd + 1;
    }
    close_range(static_cast<unsigned>(next), ~0U, 0);
    Guard(fds[0], pidfds_, polls, grace);
  }
  close(fds[0]);
  for (int fd : pidfds_) close(fd);
  pidfds_.clear();
  if (pid < 0) {
    close(fds[1]);
    return false;
  }
  pipe_write_ = fds[1];
  pid_ = pid;
  return true;
}

void LaunchGuardian::Done() {
  for (int fd : pidfds_) close(fd);
  pidfds_.clear();
  if (pipe_write_ < 0) return;
  const char word = 'd';
  while (write(pipe_write_, &word, 1) < 0 && errno == EINTR) {
  }
  close(pipe_write_);
  pipe_write_ = -1;
  // The guardian exits at once; the launcher's SIGCHLD loop may have reaped it already.
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

}  // namespace genie::launch
