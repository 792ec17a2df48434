// Helpers for end-to-end tests that drive the genie CLI as a user would: run a command line
// through the shell and wait for it, capturing its output and exit code; find the test data.
// The one way tests run a command to completion (background processes: process.h). Test-only;
// any thread may call, each call owns its child process.
#pragma once

#include <string>

namespace genie::testing {

struct CliResult {
  int exit_code = -1;  // 128 + signal when killed by one; -1 when it could not be started
  std::string output;  // stdout, with stderr interleaved unless kept apart
  std::string errors;  // stderr when run with Stderr::kApart, else empty
};

enum class Stderr {
  kMerged,  // into CliResult::output, as a terminal shows it
  kApart,   // into CliResult::errors, so output can be parsed (e.g. --json)
};

// Runs `/bin/sh -c command_line` and waits for it.
CliResult RunCli(const std::string& command_line, Stderr stderr_mode = Stderr::kMerged);
// True in a sanitizer build (the asan-ubsan preset): genie runs several times slower there,
// so tests that compare measured times with a model or a peer skip, saying so.
constexpr bool kSanitizedBuild =
#if defined(__SANITIZE_ADDRESS__)
    true;
#else
    false;
#endif
// "<build>/tools/genie/genie"
std::string GenieBinary();
// A path under the test data folder (GENIE_DATA_DIR: tests/data unless configured otherwise),
// e.g. Data("astra-sim-configs/x.yml").
std::string Data(const std::string& relative);
// A path under the source tree, e.g. Source("tests/golden/inspect").
std::string Source(const std::string& relative);
// A fresh empty directory for one test (/tmp/genie-test-NAME-PID), removed when the test
// program ends with every test passed (kept, and named on stderr, when one failed).
std::string FreshDir(const std::string& name);
// The whole content of a file ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// Writes `text` to `path`; returns `path`.
std::string WriteFile(const std::string& path, const std::string& text);
// `genie simulate ARGS`: the one figure every rank reports (sys[r] finished, T cycles); -1 when
// the ranks disagree, -2 when none reports (and a test failure when genie fails).
long long SimulatedCycles(const std::string& args);

}  // namespace genie::testing
