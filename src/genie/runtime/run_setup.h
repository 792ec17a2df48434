// RunSetup: turns what the user gave (workload, system.json, network.yml, memory.json,
// comm-group file, flags) into the resolved configuration that `genie simulate` and `genie run`
// both execute — so a real run and its prediction use the same issue rules, algorithms and
// compute model. It also records the configuration as used (provenance) and prints the
// defaults it chose. Built once at start-up on the main thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/config/memory_config.h"
#include "genie/config/network_config.h"
#include "genie/config/system_config.h"
#include "genie/runtime/executor_config.h"
#include "genie/trace/workload_files.h"
#include "genie/workload/rank_graph.h"

namespace genie::runtime {

struct SetupFlags {
  std::string workload;
  std::string system_path;    // --system (ASTRA-sim: --system-configuration)
  std::string network_path;   // --network (--network-configuration)
  std::string memory_path;    // --memory (--remote-memory-configuration)
  std::string comm_group;     // --comm-group (--comm-group-configuration)
  std::string ctrl_deps = "auto";
  std::string default_comm_size;
  std::string topology;       // --topology 8x4 (logical dims for real runs without network.yml)
  int channels = 1;
  std::string slice;          // --slice BYTES
  // The flow model's parameters for every dimension, over the network.yml's (--goodput,
  // --message-overhead); unset = the network.yml's or the default.
  std::optional<double> goodput;
  std::optional<double> message_overhead_ns;
  bool verify = false;
  // --faults: a fault schedule; its compute faults (rank:) are this run's (ExecutorConfig), its
  // network faults the testbed's (genie run's rank 0 plays them).
  std::string faults;
};

struct RunSetup {
  trace::WorkloadFiles files;
  std::optional<config::SystemConfig> system;
  std::optional<config::NetworkConfig> network;
  std::optional<config::MemoryConfig> memory;
  workload::ReadOptions read;
  ExecutorConfig exec;
  std::vector<std::string> notes;  // defaults chosen, printed at start
  int network_faults = 0;          // --faults: its entries with link: (the testbed's to play)

  int world_size() const { return exec.world_size; }
  nlohmann::json ToJson() const;   // configs as used
};

Result<RunSetup> PrepareRun(const SetupFlags& flags);
// The same for a workload whose files are already known (`genie simulate` of a synth
// description: in-memory traces); flags.workload is not read.
Result<RunSetup> PrepareRun(const SetupFlags& flags, trace::WorkloadFiles files);

}  // namespace genie::runtime
