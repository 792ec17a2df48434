// genie: emulate a large ML training job's network traffic without GPUs.
#include <algorithm>
#include <cstdio>

#include "genie/common/logging.h"
#include "genie/launch/local_launcher.h"
#include "tools/genie/command.h"

namespace genie::cli {

std::vector<Command>& Registry() {
  static std::vector<Command> registry;
  return registry;
}

std::vector<std::string>& ProcessArgv() {
  static std::vector<std::string> argv;
  return argv;
}

}  // namespace genie::cli

int main(int argc, char** argv) {
  // A rank must stop when its launcher forwards SIGINT/SIGTERM, whatever it inherited.
  genie::launch::RestoreDefaultSignals();
  genie::cli::ProcessArgv().assign(argv, argv + argc);
  CLI::App app{"genie: test a real network with realistic ML training traffic, without GPUs.\n"
               "Each emulated GPU (rank) walks its Chakra execution trace; collectives become\n"
               "the point-to-point messages a collective library would send."};
  app.set_version_flag("--version", "genie " GENIE_VERSION);
  app.require_subcommand(1);
  int verbosity = 0;
  app.add_flag("-v,--verbose", verbosity, "More log output (-v info, -vv debug)");

  auto& commands = genie::cli::Registry();
  // Registration order depends on link order; present commands in workflow order instead.
  static const char* kOrder[] = {"inspect", "gen", "plan", "simulate", "run", "launch",
                                 "results", "testbed", "bench", "doctor", "report"};
  auto rank_of = [](const std::string& n) {
    auto it = std::find(std::begin(kOrder), std::end(kOrder), n);
    return static_cast<int>(it - std::begin(kOrder));
  };
  std::sort(commands.begin(), commands.end(),
            [&](const auto& a, const auto& b) { return rank_of(a.name) < rank_of(b.name); });

  std::function<int()> action;
  for (auto& command : commands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    auto run = command.setup(*sub);
    sub->callback([&action, run] { action = run; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every refused flag is bad input, exit 2 (docs/cli.md).
    return app.exit(e) == 0 ? 0 : genie::launch::kExitBadInput;
  }
  genie::SetupLogging(verbosity);
  return action ? action() : 0;
}
