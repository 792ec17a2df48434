// Running commands — the genie CLI above all — as a user would: a command line through the
// shell, waited for, its output and exit code captured. The one way tests run a command to
// completion (background processes: process.h). Needs only the genie binary's path, not the
// library. Test-only; any thread may call, each call owns its child process.
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
// "<build>/tools/genie/genie"
std::string GenieBinary();
// The command line `<build>/tools/genie/genie ARGS`, to run or to compose with the shell.
std::string Genie(const std::string& args);
// Runs `genie ARGS` and waits for it.
CliResult RunGenie(const std::string& args, Stderr stderr_mode = Stderr::kMerged);

}  // namespace genie::testing
