// Why a test cannot run on this machine: not root, no network namespaces, a tool missing, a
// sanitizer build. Each check returns the reason ("" when the test can run), which
// GENIE_SKIP_IF turns into a skip that says it. Test-only; any thread may call.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace genie::testing {

// True in a sanitizer build (the asan-ubsan preset): genie runs several times slower there,
// so tests that compare measured times with a model or a peer skip, saying so.
constexpr bool kSanitizedBuild =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif

// "`what` mean nothing under ASan" in a sanitizer build (kSanitizedBuild).
std::string Sanitized(const std::string& what);
// "needs root to `to`" unless running as root.
std::string RootMissing(const std::string& to);
// Why no testbed can be built here: not root, or `ip netns` does not work.
std::string NamespacesMissing();
// "`tool` (Debian package `package`) is not installed; ..." unless `tool` is on the PATH.
std::string ToolMissing(const std::string& tool, const std::string& package);

}  // namespace genie::testing

// Skips the running test (returning from the function) with `reason`, unless it is empty.
#define GENIE_SKIP_IF(reason)                                                       \
  if (const std::string genie_skip_reason_ = (reason); !genie_skip_reason_.empty()) \
  GTEST_SKIP() << genie_skip_reason_
