// FaultRunner: plays a fault schedule on a testbed during a run (`genie run --faults FILE`,
// rank 0). Faults timed `at` after the run's start fire from Start(); those tied to an
// iteration fire `at` after IterationStarted(k) for their k. Every action is logged with when it
// took effect on the caller's clock (`now`, rank 0's), for the results. Finish() (or the
// destructor, so also when the run fails) stops the thread and clears every fault. A guardian
// process forked by Start() clears them too if this process dies first (SIGKILL, a crash): it
// holds only a pipe from us and acts when the pipe closes without a word.
// Thread: the run's thread calls Start/IterationStarted/Finish; actions run on the runner's own
// thread (they are child processes: ip, tc, iptables), never on the event loop.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "genie/testbed/fault.h"
#include "genie/testbed/injector.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// An action taken, or a fault of the schedule that never took effect: action "not applied"
// (its time came after the run's end, or its iteration was never reached), `reason` saying
// which, at_ns when the run ended.
struct FaultEvent {
  std::string fault;   // Fault::Describe()
  std::string action;  // "apply", "undo", "clear", "not applied"
  TimeNs at_ns = 0;    // when it had taken effect, on the `now` clock
  int iteration = 0;   // the iteration that triggered it (0: the run's start)
  std::string error;   // "" when it worked
  std::string reason;  // "not applied": why
};

// How far a fault of a schedule got in a run: triggered (its time counted from), played (an
// action of it ran), and when its first action was due.
struct FaultProgress {
  bool triggered = false;
  bool played = false;
  TimeNs due = 0;
};

// The "not applied" events of the faults that never took effect, each with why: its iteration
// was never reached (the run's last was `last_iteration`), or it was due after the run's `end`.
// Times on the runner's clock; `started` is the run's start. Pure.
std::vector<FaultEvent> UnplayedFaults(const FaultSchedule& schedule,
                                       const std::vector<FaultProgress>& progress,
                                       TimeNs started, TimeNs end, int last_iteration);

class FaultRunner {
 public:
  FaultRunner(Layout layout, FaultSchedule schedule, std::function<TimeNs()> now);
  ~FaultRunner();
  FaultRunner(const FaultRunner&) = delete;
  FaultRunner& operator=(const FaultRunner&) = delete;

  // Checks every fault against the testbed (link names) before anything runs.
  Status Check() const;
  void Start();
  void IterationStarted(int iteration);  // measured iterations, 1-based
  // Stops, clears every fault and returns what happened, in order, then every fault that never
  // took effect ("not applied", with why).
  std::vector<FaultEvent> Finish();

  static nlohmann::json ToJson(const std::vector<FaultEvent>& events);

 private:
  struct Pending {
    TimeNs due;  // on the `now` clock
    FaultAction action;
    int iteration;
    size_t fault_index;  // in schedule_.faults
  };
  void Trigger(size_t fault_index, int iteration);  // mu_ held
  void Loop();
  void StartGuardian();

  SystemShell shell_;
  Injector injector_;
  FaultSchedule schedule_;
  std::function<TimeNs()> now_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Pending> pending_;
  std::vector<FaultEvent> events_;
  std::vector<FaultProgress> progress_;  // per fault of the schedule
  TimeNs started_at_ = 0;
  int last_iteration_ = 0;     // the last measured iteration started (IterationStarted)
  bool stop_ = false;
  bool finished_ = false;
  bool started_ = false;
  std::thread thread_;
  int guardian_fd_ = -1;  // write end of the guardian's pipe
  int guardian_pid_ = -1;
};

}  // namespace genie::testbed
