#include "genie/testbed/fault_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

namespace genie::testbed {

FaultRunner::FaultRunner(Layout layout, FaultSchedule schedule, std::function<TimeNs()> now)
    : injector_(std::move(layout), shell_), schedule_(std::move(schedule)), now_(std::move(now)) {}

FaultRunner::~FaultRunner() { Finish(); }

Status FaultRunner::Check() const {
  for (const auto& f : schedule_.faults) GENIE_RETURN_IF_ERROR(injector_.Check(f));
  return Status::Ok();
}

void FaultRunner::Trigger(size_t fault_index, int iteration) {
  const Fault& f = schedule_.faults[fault_index];
  const TimeNs base = now_() + f.at;
  progress_[fault_index].triggered = true;
  progress_[fault_index].due = base;
  for (const auto& a : Expand(f)) pending_.push_back({base + a.offset, a, iteration, fault_index});
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
  started_at_ = now_();
  progress_.assign(schedule_.faults.size(), FaultProgress{});
  for (size_t i = 0; i < schedule_.faults.size(); ++i) {
    if (schedule_.faults[i].iteration == 0) Trigger(i, 0);
  }
  thread_ = std::thread([this] { Loop(); });
}

void FaultRunner::IterationStarted(int iteration) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!started_) return;
  bool any = false;
  last_iteration_ = std::max(last_iteration_, iteration);
  for (size_t i = 0; i < schedule_.faults.size(); ++i) {
    if (schedule_.faults[i].iteration == iteration && !progress_[i].triggered) {
      Trigger(i, iteration);
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
    progress_[p.fault_index].played = true;
    events_.push_back({p.action.fault.Describe(), p.action.undo ? "undo" : "apply", done,
                       p.iteration, st.ok() ? "" : st.message(), ""});
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
  const TimeNs end = now_();
  events_.push_back({"every fault", "clear", end, 0, st.ok() ? "" : st.message(), ""});
  for (auto& e : UnplayedFaults(schedule_, progress_, started_at_, end, last_iteration_)) {
    events_.push_back(std::move(e));
  }
  return events_;
}

std::vector<FaultEvent> UnplayedFaults(const FaultSchedule& schedule,
                                       const std::vector<FaultProgress>& progress,
                                       TimeNs started, TimeNs end, int last_iteration) {
  auto seconds = [](TimeNs ns) { return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9); };
  std::vector<FaultEvent> out;
  for (size_t i = 0; i < schedule.faults.size() && i < progress.size(); ++i) {
    if (progress[i].played) continue;
    const Fault& f = schedule.faults[i];
    std::string reason;
    if (!progress[i].triggered) {
      reason = fmt::format(
          "iteration {} was never reached (the run ended {}); give an iteration the run "
          "reaches, or more --iterations",
          f.iteration,
          last_iteration > 0 ? fmt::format("in iteration {}", last_iteration)
                             : std::string("before its first measured iteration"));
    } else {
      reason = fmt::format(
          "due {} after the run's start{}, but the run ended {} after it; schedule it earlier "
          "or run longer",
          seconds(progress[i].due - started),
          f.iteration > 0 ? fmt::format(" (+{} into iteration {})", seconds(f.at), f.iteration)
                          : std::string(),
          seconds(end - started));
    }
    out.push_back({f.Describe(), "not applied", end, f.iteration, "", reason});
  }
  return out;
}

nlohmann::json FaultRunner::ToJson(const std::vector<FaultEvent>& events) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events) {
    nlohmann::json j = {{"fault", e.fault}, {"action", e.action}, {"at_ns", e.at_ns}};
    if (e.iteration > 0) j["iteration"] = e.iteration;
    if (!e.error.empty()) j["error"] = e.error;
    if (!e.reason.empty()) j["reason"] = e.reason;
    out.push_back(j);
  }
  return out;
}

}  // namespace genie::testbed
