#include "genie/env/real_env.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

namespace genie::env {

namespace {

TimeNs ClockNs(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

Status Errno(int err) {
  return err == ENOENT ? Status::NotFound(strerror(err)) : Status::IoError(strerror(err));
}

class RealTimer final : public Timer {
 public:
  explicit RealTimer(int fd) : fd_(fd) {}
  ~RealTimer() override { close(fd_); }
  int fd() const override { return fd_; }
  void ArmAt(TimeNs deadline) override {
    itimerspec its{};
    its.it_value.tv_sec = static_cast<time_t>(deadline / kNsPerSec);
    its.it_value.tv_nsec = static_cast<long>(deadline % kNsPerSec);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    timerfd_settime(fd_, TFD_TIMER_ABSTIME, &its, nullptr);
  }
  void Clear() override {
    uint64_t expirations;
    [[maybe_unused]] ssize_t r = read(fd_, &expirations, sizeof(expirations));
  }

 private:
  int fd_;
};

class RealWritableFile final : public WritableFile {
 public:
  explicit RealWritableFile(int fd) : fd_(fd) {}
  ~RealWritableFile() override { (void)Close(); }
  Status Append(std::string_view data) override {
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return Status::IoError(n < 0 ? strerror(errno) : "short write");
      done += static_cast<size_t>(n);
    }
    return Status::Ok();
  }
  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? Status::Ok() : Status::IoError(strerror(errno));
  }

 private:
  int fd_;
};

// What a child must start with: default dispositions and an empty mask, whatever the parent
// inherited (a shell's `trap '' INT`, nohup, a batch system) — otherwise a forwarded SIGINT is
// ignored. Runs in the forked child before exec.
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

class RealProcessGroup final : public ProcessGroup {
 public:
  RealProcessGroup(int sfd, sigset_t old_mask) : sfd_(sfd), old_mask_(old_mask) {}
  ~RealProcessGroup() override {
    close(sfd_);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

  Result<int> Spawn(const ProcessSpec& spec) override {
    std::vector<char*> args;
    for (const auto& a : spec.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) return Status::IoError(strerror(errno));
    if (pid > 0) return static_cast<int>(pid);
    // The child: only async-signal-safe work from here to exec.
    ResetSignalsInChild();
    if (spec.before_exec) spec.before_exec();
    if (!spec.netns.empty()) {
      const std::string path = "/var/run/netns/" + spec.netns;
      int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
        fprintf(stderr, "%s: cannot enter network namespace %s: %s (is the testbed up? `genie "
                "testbed list`; entering one needs root)\n",
                spec.who.c_str(), spec.netns.c_str(), strerror(errno));
        _exit(2);
      }
      close(fd);
    }
    for (const auto& [k, v] : spec.env) setenv(k.c_str(), v.c_str(), 1);
    if (args[0] != nullptr) execvp(args[0], args.data());
    fprintf(stderr, "%s: cannot run %s: %s\n", spec.who.c_str(),
            args[0] != nullptr ? args[0] : "(nothing)", strerror(errno));
    _exit(127);
  }

  void Signal(int pid, int sig) override { kill(pid, sig); }
  bool RealProcesses() const override { return true; }

  ProcessEvent Wait(TimeNs deadline) override {
    while (true) {
      int timeout_ms = -1;
      if (deadline >= 0) {
        const TimeNs left = deadline - ClockNs(CLOCK_MONOTONIC);
        timeout_ms = left <= 0 ? 0 : static_cast<int>(left / kNsPerMs + 1);
      }
      pollfd p{sfd_, POLLIN, 0};
      const int n = poll(&p, 1, timeout_ms);
      if (n == 0 && deadline >= 0 && ClockNs(CLOCK_MONOTONIC) >= deadline) return {};
      if (n <= 0) continue;
      signalfd_siginfo si;
      if (read(sfd_, &si, sizeof(si)) != static_cast<ssize_t>(sizeof(si))) continue;
      ProcessEvent e;
      if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
        e.kind = ProcessEvent::Kind::kSignal;
        e.signal = static_cast<int>(si.ssi_signo);
        return e;
      }
      // SIGCHLD: reap everything that has exited (signals coalesce).
      e.kind = ProcessEvent::Kind::kExited;
      while (true) {
        int wstatus = 0;
        pid_t pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid <= 0) break;
        e.exited.emplace_back(static_cast<int>(pid), wstatus);
      }
      return e;
    }
  }

 private:
  int sfd_;
  sigset_t old_mask_;
};

}  // namespace

TimeNs RealEnv::Now() const { return ClockNs(CLOCK_MONOTONIC); }
TimeNs RealEnv::NowWall() const { return ClockNs(CLOCK_REALTIME); }

void RealEnv::SleepFor(TimeNs d) {
  if (d <= 0) return;
  timespec ts{static_cast<time_t>(d / kNsPerSec), static_cast<long>(d % kNsPerSec)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

Result<std::unique_ptr<Timer>> RealEnv::NewTimer() {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (fd < 0) return Status::IoError(strerror(errno));
  return std::unique_ptr<Timer>(new RealTimer(fd));
}

Result<std::string> RealEnv::ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Errno(errno);
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Errno(err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Result<std::unique_ptr<WritableFile>> RealEnv::NewWritableFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno(errno);
  return std::unique_ptr<WritableFile>(new RealWritableFile(fd));
}

Status RealEnv::RenameFile(const std::string& from, const std::string& to) {
  return ::rename(from.c_str(), to.c_str()) == 0 ? Status::Ok() : Errno(errno);
}

Status RealEnv::RemoveFile(const std::string& path) {
  return ::unlink(path.c_str()) == 0 ? Status::Ok() : Errno(errno);
}

Status RealEnv::RemoveAll(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  return ec ? Status::IoError(ec.message()) : Status::Ok();
}

Status RealEnv::CreateDir(const std::string& path) {
  return ::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST ? Status::Ok() : Errno(errno);
}

Status RealEnv::CreateDirs(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  return ec ? Status::IoError(ec.message()) : Status::Ok();
}

bool RealEnv::FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

Result<std::string> RealEnv::CreateTempDir(const std::string& prefix) {
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string tmpl = (base / (prefix + "XXXXXX")).string();
  if (mkdtemp(tmpl.data()) == nullptr) return Status::IoError(strerror(errno));
  return tmpl;
}

Result<std::unique_ptr<ProcessGroup>> RealEnv::NewProcessGroup() {
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, &old_mask);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0) {
    const int err = errno;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return Status::IoError(strerror(err));
  }
  return std::unique_ptr<ProcessGroup>(new RealProcessGroup(sfd, old_mask));
}

int RealEnv::ProcessId() const { return static_cast<int>(getpid()); }

std::optional<std::string> RealEnv::GetEnv(const std::string& name) const {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

void RealEnv::SetEnv(const std::string& name, const std::string& value) {
  ::setenv(name.c_str(), value.c_str(), 1);
}

}  // namespace genie::env
