#include "genie/testbed/fault_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

namespace genie::testbed {

FaultRunner::FaultRunner(Layout layout, FaultSchedule schedule, std::function<TimeNs()> now)
    : injector_(std::move(layout), shell_), schedule_(std::move(schedule)), now_(std::move(now)) {}

FaultRunner::~FaultRunner() { Finish(); }

Status FaultRunner::Check() const {
  for (const auto& f : schedule_.faults) GENIE_RETURN_IF_ERROR(injector_.Check(f));
  return Status::Ok();
}

void FaultRunner::Trigger(const Fault& f, int iteration) {
  const TimeNs base = now_() + f.at;
  for (const auto& a : Expand(f)) pending_.push_back({base + a.offset, a, iteration});
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Pending& x, const Pending& y) { return x.due < y.due; });
}

void FaultRunner::StartGuardian() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    // Keep nothing of the rank but the pipe: an inherited socket would keep the rank's
    // connections open after it died, and hide its death from its peers.
    dup2(fds[0], 3);
    close_range(4, ~0U, 0);
    signal(SIGINT, SIG_IGN);  // a terminal's Ctrl-C reaches the whole group: outlive the rank
    signal(SIGTERM, SIG_IGN);
    setpgid(0, 0);
    char word = 0;
    ssize_t n;
    while ((n = read(3, &word, 1)) < 0 && errno == EINTR) {
    }
    if (n == 1 && word == 'd') _exit(0);
    (void)injector_.ClearAll();
    _exit(0);
  }
  close(fds[0]);
  guardian_fd_ = fds[1];
  guardian_pid_ = pid;
}

void FaultRunner::Start() {
  StartGuardian();
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  for (const auto& f : schedule_.faults) {
    if (f.iteration == 0) Trigger(f, 0);
  }
  thread_ = std::thread([this] { Loop(); });
}

void FaultRunner::IterationStarted(int iteration) {
  std::lock_guard<std::mutex> lock(mu_);
  bool any = false;
  for (const auto& f : schedule_.faults) {
    if (f.iteration == iteration) {
      Trigger(f, iteration);
      any = true;
    }
  }
  if (any) cv_.notify_all();
}

void FaultRunner::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (pending_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const TimeNs wait = pending_.front().due - now_();
    if (wait > 0) {
      cv_.wait_for(lock, std::chrono::nanoseconds(wait));
      continue;
    }
    Pending p = pending_.front();
    pending_.erase(pending_.begin());
    lock.unlock();
    Status st = injector_.Do(p.action);
    const TimeNs done = now_();
    lock.lock();
    events_.push_back({p.action.fault.Describe(), p.action.undo ? "undo" : "apply", done,
                       p.iteration, st.ok() ? "" : st.message()});
  }
}

std::vector<FaultEvent> FaultRunner::Finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_ || !started_) return events_;
    finished_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  Status st = injector_.ClearAll();
  if (guardian_fd_ >= 0) {
    (void)!write(guardian_fd_, "d", 1);
    close(guardian_fd_);
    waitpid(guardian_pid_, nullptr, 0);
    guardian_fd_ = -1;
  }
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back({"every fault", "clear", now_(), 0, st.ok() ? "" : st.message()});
  return events_;
}

nlohmann::json FaultRunner::ToJson(const std::vector<FaultEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events) {
    nlohmann::json j = {{"fault", e.fault}, {"action", e.action}, {"at_ns", e.at_ns}};
    if (e.iteration > 0) j["iteration"] = e.iteration;
    if (!e.error.empty()) j["error"] = e.error;
    out.push_back(j);
  }
  return out;
}

}  // namespace genie::testbed
