// A testbed that the cases of one test suite share: brought up in SetUpTestSuite, its faults
// cleared after each case, taken down in TearDownTestSuite with none of its namespaces left.
// Under ctest each case is a process of its own: there the testbed is a ctest fixture, up once
// before the first case that needs it and down after the last (tests/CMakeLists.txt,
// suite_testbed.sh; suites on one topology share it), and GENIE_SUITE_TESTBED names it to the
// cases, which use it as it is. For the serial suites whose cases leave the testbed as they
// found it: a fault per case, cleared after it, or a run's fault schedule (doctor_e2e,
// spine_localize_e2e, predict_e2e, attribution_e2e, predict_stg_e2e). Nothing is made without
// network namespaces: the cases then skip (GENIE_SKIP_IF in their SetUp). Test-only; the
// test's main thread.
#pragma once

#include <string>

namespace genie::testing {

class SuiteTestbed {
 public:
  // `genie testbed up --name name args` (args: "--topology star:8 --rate 400mbit"), when this
  // machine can build a testbed; a failure is kept for up_error(). With GENIE_SUITE_TESTBED
  // set, that testbed instead (an error when it is not up).
  void Up(const std::string& name, const std::string& args);
  // Takes its own testbed down (if up) and expects none of its namespaces left; a fixture's is
  // the fixture's to take down.
  void Down();
  bool up() const { return !name_.empty(); }
  const std::string& name() const { return name_; }
  const std::string& up_error() const { return up_error_; }
  // `genie testbed fault NAME args`; a refusal fails the test.
  void Fault(const std::string& args) const;
  // Clears its faults (quietly: also when a case failed half-way).
  void ClearFaults() const;

 private:
  std::string name_, up_error_;
  bool shared_ = false;  // the ctest fixture's (GENIE_SUITE_TESTBED)
};

}  // namespace genie::testing
