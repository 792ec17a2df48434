// Control: bringing a testbed up and down, finding the ones that exist. A testbed is its
// namespaces plus its description file (StateDir()/NAME.json, the Layout as JSON), which is
// written last by Up and removed last by Down, so a description always names a whole testbed.
// Up removes what it made when a step fails; Down removes every namespace of the name (also
// those of a half-made testbed with no description) after stopping every process inside them
// (fault helpers, ranks left running). Nothing else on the machine is touched.
// Main thread of the CLI (or a test); two processes on the same name are serialised by a lock.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "genie/env/env.h"
#include "genie/common/status.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// Where descriptions live: $GENIE_TESTBED_DIR, else /run/genie/testbeds (tmpfs: a reboot
// removes namespaces and descriptions alike).
// `env` nullptr: the real environment.
std::string StateDir(env::Env* env = nullptr);
std::string DescriptionPath(const std::string& name);

// OK when this process can create network namespaces (root, `ip` and `tc` present); otherwise
// an error saying what is missing — and nothing was changed.
Status CheckCanBuild(Shell& shell);

// Builds `spec` (validated and laid out) and writes its description. Refuses when a testbed of
// that name exists. `log`, when given, receives every command as it runs.
Result<Layout> Up(const TestbedSpec& spec, Shell& shell, std::string* log = nullptr);

// Removes testbed `name`: processes in its namespaces, the namespaces, the description.
// NotFound when nothing of that name exists.
Status Down(const std::string& name, Shell& shell);

// The description of testbed `name`, with a message saying how to list testbeds if missing.
Result<Layout> Load(const std::string& name);

// Names of the testbeds with a description.
std::vector<std::string> List();

// SIGTERM to every process in network namespace `ns` (or those `only` accepts, by pid), then
// SIGKILL to any still there after a second.
void StopProcessesIn(const std::string& ns, Shell& shell,
                     const std::function<bool(int pid)>& only = nullptr);

// Namespaces on the machine that belong to testbed `name` (NAME-h3, NAME-sw, NAME-l0, NAME-s1).
std::vector<std::string> NamespacesOf(const std::string& name, Shell& shell);

}  // namespace genie::testbed
