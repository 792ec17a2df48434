#include "genie/loop/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace genie::loop {

namespace {
constexpr TimeNs kForever = std::numeric_limits<TimeNs>::max();
constexpr TimeNs kLateThreshold = kNsPerMs;
constexpr TimeNs kPureSpin = 10 * kNsPerUs;
}  // namespace

Result<std::unique_ptr<EventLoop>> EventLoop::Create(SleepPolicy policy, env::Env* env) {
  if (env == nullptr) env = env::Env::Default();
  // Spinning waits for the clock to pass a deadline: one that moves only by hand never would.
  if (!env->ClockMovesByItself()) policy.spin = false;
  SetMinimalTimerSlack();
  int epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) return Status::IoError(fmt::format("epoll_create1: {}", strerror(errno)));
  auto timer = env->NewTimer();
  int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (!timer.ok() || efd < 0) {
    std::string err = timer.ok() ? strerror(errno) : timer.status().message();
    close(epfd);
    if (efd >= 0) close(efd);
    return Status::IoError("timerfd/eventfd: " + err);
  }
  const int tfd = (*timer)->fd();
  for (int fd : {tfd, efd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
  }
  return std::unique_ptr<EventLoop>(
      new EventLoop(policy, env, epfd, std::move(timer).value(), efd));
}

EventLoop::EventLoop(SleepPolicy policy, env::Env* env, int epfd,
                     std::unique_ptr<env::Timer> timer, int efd)
    : policy_(policy), env_(env), epfd_(epfd), timer_(std::move(timer)), tfd_(timer_->fd()), efd_(efd) {}

EventLoop::~EventLoop() {
  timer_.reset();
  close(efd_);
  close(epfd_);
}

Status EventLoop::AddFd(int fd, uint32_t events, FdHandler handler) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Status::IoError(fmt::format("epoll_ctl(ADD, fd {}): {}", fd, strerror(errno)));
  }
  handlers_[fd] = std::make_shared<FdHandler>(std::move(handler));
  return Status::Ok();
}

Status EventLoop::ModifyFd(int fd, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) != 0) {
    return Status::IoError(fmt::format("epoll_ctl(MOD, fd {}): {}", fd, strerror(errno)));
  }
  return Status::Ok();
}

void EventLoop::RemoveFd(int fd) {
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  handlers_.erase(fd);
}

EventLoop::TimerId EventLoop::RunAt(TimeNs deadline, Task fn) {
  TimerId id = next_timer_id_++;
  timers_.push({deadline, id});
  timer_tasks_.emplace(id, std::move(fn));
  return id;
}

EventLoop::TimerId EventLoop::RunAtCoarse(TimeNs deadline, Task fn) {
  TimerId id = next_timer_id_++;
  timers_.push({deadline, id, true});
  timer_tasks_.emplace(id, std::move(fn));
  return id;
}

void EventLoop::Cancel(TimerId id) { timer_tasks_.erase(id); }

void EventLoop::Post(Task fn) { posted_.push_back(std::move(fn)); }

void EventLoop::Quit() {
  quit_.store(true, std::memory_order_release);
  uint64_t one = 1;
  // Wakes a blocked epoll_wait; async-signal-safe.
  [[maybe_unused]] ssize_t n = write(efd_, &one, sizeof(one));
}

void EventLoop::Run() {
  while (!quitting()) RunOnce(kForever);
}

void EventLoop::RunOnce(TimeNs max_wait_until) {
  Wait(max_wait_until);
  FireDueTimers();
  RunPosted();
}

void EventLoop::ArmTimerFd(TimeNs when) {
  if (when == armed_at_) return;
  timer_->ArmAt(when);
  armed_at_ = when;
}

void EventLoop::Wait(TimeNs max_wait_until) {
  // Drop cancelled timers from the top so they do not wake us.
  while (!timers_.empty() && !timer_tasks_.count(timers_.top().id)) timers_.pop();
  TimeNs target = max_wait_until;
  bool spin = policy_.spin;
  if (!timers_.empty() && timers_.top().deadline < target) {
    target = timers_.top().deadline;
    spin = spin && !timers_.top().coarse;  // housekeeping is not worth a core
  }

  int timeout_ms = -1;
  TimeNs now = env_->Now();
  if (!posted_.empty() || quitting() || target <= now) {
    timeout_ms = 0;
  } else if (spin && target - now <= policy_.margin) {
    // Inside the margin: busy-poll sockets until the deadline; for the last few µs spin
    // without syscalls, since one epoll_wait costs about a microsecond.
    if (target - now <= kPureSpin) {
      while (env_->Now() < target) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      return;  // fire the timer now; sockets are polled on the very next iteration
    }
    timeout_ms = 0;
  } else if (target != kForever) {
    ArmTimerFd(spin ? target - policy_.margin : target);
  }

  epoll_event events[128];
  int n = epoll_wait(epfd_, events, 128, timeout_ms);
  if (n < 0) return;  // EINTR: the caller's loop comes back
  for (int i = 0; i < n; ++i) {
    int fd = events[i].data.fd;
    if (fd == tfd_) {
      timer_->Clear();
      armed_at_ = -1;
      continue;
    }
    if (fd == efd_) {
      uint64_t v;
      [[maybe_unused]] ssize_t r = read(efd_, &v, sizeof(v));
      continue;
    }
    auto it = handlers_.find(fd);
    if (it == handlers_.end()) continue;  // removed by an earlier handler in this batch
    std::shared_ptr<FdHandler> h = it->second;  // survives RemoveFd inside the handler
    (*h)(events[i].events);
  }
}

void EventLoop::FireDueTimers() {
  TimeNs now = env_->Now();
  while (!timers_.empty() && timers_.top().deadline <= now) {
    Timer t = timers_.top();
    timers_.pop();
    auto it = timer_tasks_.find(t.id);
    if (it == timer_tasks_.end()) continue;
    Task fn = std::move(it->second);
    timer_tasks_.erase(it);
    if (!t.coarse && now - t.deadline > kLateThreshold) ++late_timers_;
    fn();
  }
}

void EventLoop::RunPosted() {
  running_.swap(posted_);
  for (auto& fn : running_) fn();
  running_.clear();
}

}  // namespace genie::loop
