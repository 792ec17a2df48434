#include "tests/support/suite_testbed.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/support/cli.h"
#include "tests/support/skip.h"

namespace genie::testing {

void SuiteTestbed::Up(const std::string& name, const std::string& args) {
  if (!NamespacesMissing().empty()) return;
  if (const char* shared = std::getenv("GENIE_SUITE_TESTBED"); shared != nullptr && *shared) {
    CliResult status = RunCli(Genie(std::string("testbed status ") + shared));
    if (status.exit_code != 0) {
      up_error_ = std::string("the suite's testbed ") + shared +
                  " (GENIE_SUITE_TESTBED, a ctest fixture) is not up; its setup test failed?\n" +
                  status.output;
      return;
    }
    name_ = shared;
    shared_ = true;
    return;
  }
  CliResult up = RunCli(Genie("testbed up --name " + name + " " + args));
  if (up.exit_code != 0) {
    up_error_ = up.output;
    return;
  }
  name_ = name;
}

void SuiteTestbed::Down() {
  if (shared_) name_.clear();
  if (name_.empty()) return;
  RunCli(Genie("testbed down " + name_) + " 2>/dev/null");
  EXPECT_EQ(RunCli("ip netns list 2>/dev/null | grep -c '^" + name_ + "-' || true").output, "0\n");
  name_.clear();
}

void SuiteTestbed::Fault(const std::string& args) const {
  CliResult f = RunCli(Genie("testbed fault " + name_ + " " + args));
  ASSERT_EQ(f.exit_code, 0) << f.output;
}

void SuiteTestbed::ClearFaults() const {
  if (!name_.empty()) RunCli(Genie("testbed fault " + name_ + " clear") + " >/dev/null 2>&1");
}

}  // namespace genie::testing
