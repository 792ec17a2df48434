// Shell: how the testbed changes the machine — every change is one command (`ip`, `tc`,
// `iptables`, `sysctl`, ...) run as a child process with an argv, never through /bin/sh, so
// names from a user's YAML cannot inject anything and every step can be logged and replayed.
// A Shell that records instead of running (for unit tests of what would be run) is the other
// implementation. Not thread-safe: one owner (the CLI's main thread, or a run's fault thread).
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::testbed {

using Argv = std::vector<std::string>;

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed; -1 when it could not be started
  std::string output;  // stdout
  std::string errors;  // stderr (kept apart: `ip` warns on stderr while printing JSON)
};

class Shell {
 public:
  virtual ~Shell() = default;
  // Runs argv[0] (found in PATH) and waits for it.
  virtual CommandResult Run(const Argv& argv) = 0;

  // Runs and turns a non-zero exit into an error that quotes the command and its output.
  Status Must(const Argv& argv);
  // Runs and returns stdout on success; the error quotes stderr.
  Result<std::string> Output(const Argv& argv);
};

// Runs commands for real.
class SystemShell : public Shell {
 public:
  CommandResult Run(const Argv& argv) override;
};

// Records every command and answers with canned results (exit 0, empty output by default).
class RecordingShell : public Shell {
 public:
  CommandResult Run(const Argv& argv) override;
  std::vector<Argv> commands;
};

// "ip -n ns link set dev x up" — for messages and logs.
std::string ToString(const Argv& argv);

// Argv prefix that runs a command inside network namespace `ns` (ip netns exec NS ...).
Argv InNamespace(const std::string& ns, Argv argv);

}  // namespace genie::testbed
