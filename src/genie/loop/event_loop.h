// EventLoop: the one loop of a rank process (epoll + one timer). It waits for socket
// readiness and for timers on absolute deadlines of its Env's clock (env/env.h: the real one's
// CLOCK_MONOTONIC by default), firing timers with the precise-sleep recipe: the Env's timer (a
// timerfd) is armed at (deadline - margin) and, when spinning is allowed, the loop then
// busy-polls epoll with a zero timeout until the deadline — so sockets keep being served while
// it spins, and no thread is ever created per operation. On a ManualEnv the loop never spins:
// its timers fire when the test advances the clock (from the loop's thread, then RunOnce; or
// from another, which wakes the loop).
//
// Ownership: the loop owns its epoll fd, timer and eventfd and borrows its Env (which must
// outlive it); it does NOT own registered fds
// (callers close them after RemoveFd). Threading: every method must be called on the loop
// thread (the one calling Run), except Quit() and Wake(), which any thread or a signal handler
// may call. Callbacks run on the loop thread, never re-entrantly from the call that scheduled
// them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/env/env.h"
#include "genie/loop/precise_sleep.h"

namespace genie::loop {

class EventLoop {
 public:
  using TimerId = uint64_t;
  using Task = std::function<void()>;
  // Receives the epoll event mask (EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, ...).
  using FdHandler = std::function<void(uint32_t events)>;

  // `env` nullptr: Env::Default(). A clock that does not move by itself turns spinning off.
  static Result<std::unique_ptr<EventLoop>> Create(SleepPolicy policy = {},
                                                   env::Env* env = nullptr);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Watches `fd` for `events` (EPOLLIN/EPOLLOUT...; level-triggered). One handler per fd.
  Status AddFd(int fd, uint32_t events, FdHandler handler);
  Status ModifyFd(int fd, uint32_t events);
  // Stops watching; safe to call from inside that fd's own handler.
  void RemoveFd(int fd);

  // Runs `fn` once Now() >= deadline (absolute ns). Returns an id for Cancel.
  TimerId RunAt(TimeNs deadline, Task fn);
  TimerId RunAfter(TimeNs delay, Task fn) { return RunAt(Now() + delay, std::move(fn)); }
  // A housekeeping timer (liveness ticks): runs once due like RunAt, but the loop never spins
  // for it and does not count it in late_timers(), so that it costs neither CPU nor the
  // precision figures of a run.
  TimerId RunAtCoarse(TimeNs deadline, Task fn);
  // A cancelled timer never runs; cancelling a fired or unknown id does nothing.
  void Cancel(TimerId id);
  // Runs `fn` on the next loop iteration (after the current callback returns).
  void Post(Task fn);

  // Runs until Quit(). Returns immediately if Quit() was already called.
  void Run();
  // Runs one iteration, waiting at most until `max_wait_until` (absolute ns); for callers that
  // drive the loop themselves while connecting (setup phases with their own deadline).
  void RunOnce(TimeNs max_wait_until);
  // Any thread: makes Run() return after the current iteration.
  void Quit();
  bool quitting() const { return quit_.load(std::memory_order_acquire); }
  // Clears a previous Quit() so Run() may be called again.
  void ResetQuit() { quit_.store(false, std::memory_order_release); }

  // The Env's clock: the time every deadline above is on.
  TimeNs Now() const { return env_->Now(); }
  env::Env* env() const { return env_; }
  const SleepPolicy& policy() const { return policy_; }
  // Timers fired late by more than 1 ms (VM preemption, overload); a health figure for results.
  uint64_t late_timers() const { return late_timers_; }

 private:
  struct Timer {
    TimeNs deadline;
    TimerId id;
    bool coarse = false;
    bool operator>(const Timer& o) const {
      return deadline != o.deadline ? deadline > o.deadline : id > o.id;
    }
  };

  EventLoop(SleepPolicy policy, env::Env* env, int epfd, std::unique_ptr<env::Timer> timer,
            int efd);
  void Wait(TimeNs max_wait_until);
  void ArmTimerFd(TimeNs when);
  void FireDueTimers();
  void RunPosted();

  SleepPolicy policy_;
  env::Env* env_;
  int epfd_;
  std::unique_ptr<env::Timer> timer_;
  int tfd_;  // timer_->fd(), compared once per event
  int efd_;
  std::atomic<bool> quit_{false};
  std::unordered_map<int, std::shared_ptr<FdHandler>> handlers_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::unordered_map<TimerId, Task> timer_tasks_;  // absent = cancelled
  TimerId next_timer_id_ = 1;
  TimeNs armed_at_ = -1;  // deadline the timer is armed for, -1 = disarmed
  std::vector<Task> posted_, running_;
  uint64_t late_timers_ = 0;
};

}  // namespace genie::loop
