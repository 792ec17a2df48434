#include "genie/driver/testbed_session.h"

#include "genie/testbed/control.h"

namespace genie::driver {

Result<std::unique_ptr<TestbedSession>> TestbedSession::Open(std::string name,
                                                             const std::string& faults_path,
                                                             std::function<TimeNs()> now) {
  testbed::FaultSchedule schedule;
  if (!faults_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(schedule, testbed::LoadFaultSchedule(faults_path));
    if (name.empty() && schedule.faults.empty()) {
      return std::unique_ptr<TestbedSession>();  // compute faults only
    }
    if (name.empty()) name = schedule.testbed;
    if (name.empty()) {
      return Status::InvalidArgument(
          "--faults " + faults_path +
          ": which testbed? Run under `genie launch --testbed NAME`, or say `testbed: NAME` in "
          "the file");
    }
    if (!schedule.testbed.empty() && schedule.testbed != name) {
      return Status::InvalidArgument("--faults " + faults_path + " is for testbed '" +
                                     schedule.testbed + "' but this run is on '" + name + "'");
    }
  }
  GENIE_ASSIGN_OR_RETURN(testbed::Layout layout, testbed::Load(name));
  std::unique_ptr<testbed::FaultRunner> faults;
  if (!schedule.faults.empty()) {
    faults = std::make_unique<testbed::FaultRunner>(layout, schedule, std::move(now));
    Status st = faults->Check();
    if (!st.ok()) return Status::InvalidArgument("--faults " + faults_path + ": " + st.message());
  }
  return std::unique_ptr<TestbedSession>(new TestbedSession(std::move(layout), std::move(faults)));
}

void TestbedSession::Begin() {
  testbed::SystemShell shell;
  before_ = testbed::ReadCounters(layout_, shell);
  if (faults_) faults_->Start();
}

void TestbedSession::IterationEnded(int index) {
  // The next iteration, counted from 1 among the measured ones.
  if (faults_ && index + 2 >= 1) faults_->IterationStarted(index + 2);
}

nlohmann::json TestbedSession::End() {
  nlohmann::json out = {{"rank", 0}, {"name", layout_.name()},
                        {"topology", layout_.spec.TopologyText()},
                        {"rate_bps", layout_.spec.rate_bps}};
  if (faults_) out["faults"] = testbed::FaultRunner::ToJson(faults_->Finish());
  // Each link end's qdisc, rate and queue as the run began (report/network_settings.h).
  if (before_.ok()) out["links"] = before_->QdiscsJson();
  testbed::SystemShell shell;
  auto after = testbed::ReadCounters(layout_, shell);
  if (before_.ok() && after.ok()) {
    out["counters"] = testbed::Delta(*before_, *after).ToJson();
  } else {
    out["counters_error"] = (!before_.ok() ? before_.status() : after.status()).message();
  }
  return out;
}

}  // namespace genie::driver
