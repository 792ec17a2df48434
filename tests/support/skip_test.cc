// The skip reasons: empty when the test can run, else a sentence naming what is missing.
#include "tests/support/skip.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace genie::testing {
namespace {

TEST(SkipTest, AToolOnThePathIsNotMissing) { EXPECT_EQ(ToolMissing("sh", "dash"), ""); }

TEST(SkipTest, AMissingToolIsNamedWithItsPackage) {
  EXPECT_EQ(ToolMissing("genie-no-such-tool", "genie-pkg"),
            "genie-no-such-tool (Debian package genie-pkg) is not installed; "
            "scripts/install-deps.sh installs it");
}

TEST(SkipTest, RootIsMissingOnlyForOthers) {
  EXPECT_EQ(RootMissing("do x"), geteuid() == 0 ? "" : "needs root to do x");
  if (geteuid() != 0) {
    EXPECT_EQ(NamespacesMissing(), "needs root to build a testbed (network namespaces)");
  }
}

TEST(SkipTest, SanitizedOnlyInASanitizerBuild) {
  EXPECT_EQ(Sanitized("times"), kSanitizedBuild ? "times mean nothing under ASan" : "");
}

}  // namespace
}  // namespace genie::testing
