// Helpers for end-to-end tests that drive the genie CLI as a user would: run a command line
// through the shell, capture its output and exit code, find the shipped data. Test-only.
#pragma once

#include <string>

namespace genie::testing {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `command_line` with /bin/sh; stderr is merged into the captured output.
CliResult RunCli(const std::string& command_line);
// "<build>/tools/genie/genie"
std::string GenieBinary();
// A path under the shared data folder (../shared/data), e.g. Data("astra-sim-configs/x.yml").
std::string Data(const std::string& relative);
// A fresh empty directory for one test.
std::string FreshDir(const std::string& name);
// The whole content of a file ("" when it cannot be read).
std::string ReadFile(const std::string& path);

}  // namespace genie::testing
