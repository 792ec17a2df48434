#include "tests/support/suite_testbed.h"

#include <gtest/gtest.h>

#include "tests/support/cli.h"
#include "tests/support/skip.h"

namespace genie::testing {

void SuiteTestbed::Up(const std::string& name, const std::string& args) {
  if (!NamespacesMissing().empty()) return;
  CliResult up = RunCli(Genie("testbed up --name " + name + " " + args));
  if (up.exit_code != 0) {
    up_error_ = up.output;
    return;
  }
  name_ = name;
}

void SuiteTestbed::Down() {
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
