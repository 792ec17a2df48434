// TestbedSession: what rank 0 of a run on a `genie testbed` does beside the workload — reads
// the testbed's counters (interfaces, tbf, TCP retransmissions per host) before and after, and
// plays a fault schedule (--faults) during the run, clearing it at the end, also when the run
// fails (and, through the runner's guardian, when rank 0 dies). End() returns the "testbed"
// record for the rank's stream, which merges into results.json.
// Thread: the run's main thread.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "genie/common/status.h"
#include "genie/testbed/counters.h"
#include "genie/testbed/fault_runner.h"
#include "genie/testbed/layout.h"

namespace genie::driver {

class TestbedSession {
 public:
  // `name`: the testbed (flag, or GENIE_TESTBED from genie launch --testbed; "" with faults:
  // the schedule's `testbed:`). Errors name the testbed or the schedule file and say what to do.
  // Null when there is neither a testbed nor a network fault (a schedule of compute faults).
  static Result<std::unique_ptr<TestbedSession>> Open(std::string name,
                                                      const std::string& faults_path,
                                                      std::function<TimeNs()> now);
  // Counters before; the schedule's clock starts.
  void Begin();
  // After iteration `index` ended (IterationDriver's numbering: negative = warm-up).
  void IterationEnded(int index);
  // Clears faults, reads counters again: the "testbed" record.
  nlohmann::json End();

  const std::string& name() const { return layout_.name(); }

 private:
  TestbedSession(testbed::Layout layout, std::unique_ptr<testbed::FaultRunner> faults)
      : layout_(std::move(layout)), faults_(std::move(faults)) {}

  testbed::Layout layout_;
  std::unique_ptr<testbed::FaultRunner> faults_;
  Result<testbed::Counters> before_ = Status::Internal("not read");
};

}  // namespace genie::driver
