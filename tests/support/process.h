// Background processes for end-to-end tests that must watch ranks individually — kill one,
// stop one, see the others exit — which a launcher would hide; also several commands running
// at once; and what is left running after a kill. A command run to completion goes through
// RunCli (cli.h). Test-only; the thread that spawned a child waits for it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace genie::testing {

struct Child {
  pid_t pid = -1;
  std::string log;  // stdout and stderr of the command
};

// Starts `/bin/sh -c command_line` in its own process group, output to `log_path`.
Child Spawn(const std::string& command_line, const std::string& log_path);
// Waits up to `timeout_s` for the child to exit; its exit code (128 + signal when killed), or
// nullopt when it is still running.
std::optional<int> WaitExit(const Child& child, double timeout_s);
// Sends `signal` to the child's whole process group.
void Signal(const Child& child, int signal);
// The whole log written so far.
std::string ReadLog(const Child& child);
// How many live processes have `pid` as their parent (from /proc).
int CountChildren(pid_t pid);
// Seconds on a monotonic clock (for "exited within" checks).
double NowSeconds();
// Polls `cond` every 50 ms until it holds (true) or `timeout_s` has passed (false).
bool WaitFor(const std::function<bool()>& cond, double timeout_s);
// How many processes (other than this test) have `needle` in their command line: what a killed
// launcher or job left running.
int ProcessesMentioning(const std::string& needle);

}  // namespace genie::testing
