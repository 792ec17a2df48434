#include "genie/loop/precise_sleep.h"

#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include <cerrno>

namespace genie::loop {

TimeNs MonotonicNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

bool SetMinimalTimerSlack() { return prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0) == 0; }

SleepPolicy DefaultSleepPolicy(int local_ranks, int spin_us) {
  SleepPolicy p;
  p.spin = local_ranks <= UsableCores();
  if (spin_us < 0) {
    p.spin = false;
  } else if (spin_us > 0) {
    p.spin = true;  // an explicit margin is an explicit request to spin
    p.margin = static_cast<TimeNs>(spin_us) * kNsPerUs;
  }
  return p;
}

void SleepUntil(TimeNs deadline, const SleepPolicy& policy) {
  TimeNs block_until = policy.spin ? deadline - policy.margin : deadline;
  if (MonotonicNow() < block_until) {
    timespec ts{static_cast<time_t>(block_until / kNsPerSec),
                static_cast<long>(block_until % kNsPerSec)};
    // EINTR: a signal woke us early; sleep again to the same absolute time.
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  while (MonotonicNow() < deadline) {
    // Spin; the pause hint keeps a sibling hyperthread fed.
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace genie::loop
