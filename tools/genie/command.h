// The genie CLI is one binary with subcommands (inspect, gen, plan, simulate, run, launch,
// results, ...). Each subcommand lives in its own cmd_<name>.cc and registers itself with
// GENIE_COMMAND, so adding a command touches no shared file. Main thread only.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace genie::cli {

// Adds the subcommand's options to `app` and returns the action to run when it is chosen.
// The action returns the process exit code.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct Command {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<Command>& Registry();
// The process's command line as given (for provenance and for re-launching itself).
std::vector<std::string>& ProcessArgv();

struct Registrar {
  Registrar(std::string name, std::string description, CommandSetup setup) {
    Registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace genie::cli

// GENIE_COMMAND(inspect, "Summarise and check a workload") { ...add options...; return action; }
#define GENIE_COMMAND(name, description)                                                  \
  static std::function<int()> GenieSetup_##name(CLI::App& app);                          \
  static ::genie::cli::Registrar genie_registrar_##name(#name, description, GenieSetup_##name); \
  static std::function<int()> GenieSetup_##name(CLI::App& app)
