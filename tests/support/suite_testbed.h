// A testbed that the cases of one test suite share: brought up in SetUpTestSuite (once per
// process: under ctest, where each case is its own process, once per case), its faults cleared
// after each case, taken down in TearDownTestSuite with none of its namespaces left. For the
// suites that put one fault per case on one topology (doctor_e2e, spine_localize_e2e). Nothing
// is made without network namespaces: the cases then skip (GENIE_SKIP_IF in their SetUp).
// Test-only; the test's main thread.
#pragma once

#include <string>

namespace genie::testing {

class SuiteTestbed {
 public:
  // `genie testbed up --name name args` (args: "--topology star:8 --rate 400mbit"), when this
  // machine can build a testbed; a failure is kept for up_error().
  void Up(const std::string& name, const std::string& args);
  // Takes it down (if up) and expects none of its namespaces left.
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
};

}  // namespace genie::testing
