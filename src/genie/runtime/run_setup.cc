#include "genie/runtime/run_setup.h"

#include <map>
#include <memory>

#include "genie/collective/planner.h"
#include "genie/trace/custom_files.h"

namespace genie::runtime {
namespace {

// system.json's collective names -> Chakra collective types.
const std::pair<const char*, CollectiveType> kConfigCollectives[] = {
    {"all-reduce", CollectiveType::kAllReduce},
    {"all-gather", CollectiveType::kAllGather},
    {"reduce-scatter", CollectiveType::kReduceScatter},
    {"all-to-all", CollectiveType::kAllToAll},
};

Status ApplySystem(const config::SystemConfig& sys, RunSetup* setup) {
  ExecutorConfig& e = setup->exec;
  if (sys.model_shared_bus) {
    // ASTRA-sim's graph engine still uses it (native collectives hand every message to MemBus,
    // whose LogGP sides serialise transfers with o, g, G, L and a hard-wired inner bus), so
    // ignoring it would give a different system from the one described.
    return Status::Unsupported(
        sys.path +
        ": key \"model-shared-bus\": 1 asks for ASTRA-sim's LogGP model of the "
        "NPU-memory bus (L, o, g, G), which genie does not implement; set it to 0, and genie "
        "charges endpoint-delay before every message and after every phase (ASTRA-sim's bus "
        "without the shared-bus model)");
  }
  e.costs.endpoint_delay_ns = sys.endpoint_delay_ns;
  e.costs.local_mem_bw = sys.local_mem_bw_gbps;
  e.plan.chunks = std::max(1, sys.preferred_dataset_splits);
  e.plan.active_chunks = sys.active_chunks_per_dimension;
  e.plan.optimization = sys.collective_optimization == config::CollectiveOptimization::kLocalBwAware
                            ? collective::Optimization::kLocalBwAware
                            : collective::Optimization::kBaseline;
  if (sys.inter_dimension_scheduling == "themis") {
    e.plan.inter_dim = collective::InterDimScheduling::kThemis;
  }
  switch (sys.scheduling_policy) {
    case config::SchedulingPolicy::kLifo: e.policy = collective::SchedulingPolicy::kLifo; break;
    case config::SchedulingPolicy::kFifo: e.policy = collective::SchedulingPolicy::kFifo; break;
    case config::SchedulingPolicy::kExplicit: e.policy = collective::SchedulingPolicy::kExplicit; break;
  }
  if (sys.Has("roofline-enabled")) e.compute.roofline_enabled = sys.roofline_enabled;
  if (sys.Has("peak-perf") && sys.peak_perf_tflops > 0) e.compute.peak_tflops = sys.peak_perf_tflops;
  if (sys.Has("local-mem-bw") && sys.local_mem_bw_gbps > 0) {
    e.compute.local_mem_bw_gbps = sys.local_mem_bw_gbps;
  }
  // Each custom-algorithm file is read once here and shared by every collective that names it;
  // the planner gets the parsed data.
  std::map<std::string, std::shared_ptr<const spec::CustomAlgorithm>> loaded;
  for (const auto& [key, type] : kConfigCollectives) {
    CollectiveChoice choice;
    if (const auto* impls = sys.ImplementationsFor(key)) {
      choice.algorithms.clear();
      for (const auto& impl : *impls) {
        collective::Algorithm a;
        int window = 0;
        if (!collective::ParseAlgorithm(impl.ToString(), &a, &window)) {
          return Status::Unsupported(sys.path + ": " + key + "-implementation '" +
                                     impl.ToString() + "' is not an algorithm genie knows " +
                                     "(see docs/algorithms.md)");
        }
        choice.algorithms.push_back(a);
        if (window > 0) choice.direct_window = window;
      }
    }
    auto custom = sys.custom_implementations.find(key);
    if (custom != sys.custom_implementations.end()) {
      GENIE_ASSIGN_OR_RETURN(std::string path, trace::ResolveCustomPath(custom->second, sys.path));
      auto& algorithm = loaded[path];
      if (!algorithm) {
        auto read = trace::LoadCustomAlgorithm(path);
        if (!read.ok()) {
          return read.status().WithDetail("(named in " + sys.path + " as " + key +
                                          "-implementation-custom; fix the file or name another)");
        }
        algorithm = *read;
      }
      choice.custom = algorithm;
      choice.algorithms = {collective::Algorithm::kCustom};
    }
    e.implementations[type] = choice;
  }
  return Status::Ok();
}

}  // namespace

Result<RunSetup> PrepareRun(const SetupFlags& flags) {
  if (flags.workload.empty()) {
    return Status::InvalidArgument("no workload given: pass --workload DIR_OR_PREFIX");
  }
  GENIE_ASSIGN_OR_RETURN(auto files, trace::FindWorkload(flags.workload, flags.comm_group));
  return PrepareRun(flags, std::move(files));
}

Result<RunSetup> PrepareRun(const SetupFlags& flags, trace::WorkloadFiles files) {
  RunSetup setup;
  setup.files = std::move(files);
  ExecutorConfig& e = setup.exec;
  e.world_size = setup.files.world_size();
  if (!setup.files.comm_group_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(e.groups, trace::CommGroups::Load(setup.files.comm_group_path));
  }

  if (flags.ctrl_deps == "auto") setup.read.ctrl_deps = workload::ReadOptions::CtrlDeps::kAuto;
  else if (flags.ctrl_deps == "on") setup.read.ctrl_deps = workload::ReadOptions::CtrlDeps::kOn;
  else if (flags.ctrl_deps == "off") setup.read.ctrl_deps = workload::ReadOptions::CtrlDeps::kOff;
  else return Status::InvalidArgument("--ctrl-deps takes on, off or auto, not '" + flags.ctrl_deps + "'");
  if (!flags.default_comm_size.empty()) {
    GENIE_ASSIGN_OR_RETURN(Bytes b, ParseBytes(flags.default_comm_size));
    setup.read.default_comm_size = b;
  }

  // Defaults when no system.json is given: ASTRA-sim's own defaults, ring everywhere.
  e.costs.endpoint_delay_ns = 10;
  e.plan.chunks = 1;
  e.plan.active_chunks = 1;
  if (!flags.system_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(setup.system, config::LoadSystemConfig(flags.system_path));
    GENIE_RETURN_IF_ERROR(ApplySystem(*setup.system, &setup));
  } else {
    setup.notes.push_back("no --system given: ring for every collective, 1 chunk, endpoint-delay "
                          "10 ns, LIFO (ASTRA-sim's defaults)");
  }
  setup.notes.push_back(compute::ComputeModel(e.compute).Describe());

  if (!flags.network_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(setup.network, config::LoadNetworkConfig(flags.network_path));
    if (setup.network->total_npus() < e.world_size) {
      return Status::InvalidArgument(
          flags.network_path + ": npus_count multiplies to " +
          std::to_string(setup.network->total_npus()) + " but the workload " + (flags.workload.empty() ? setup.files.name : flags.workload) +
          " has " + std::to_string(e.world_size) + " ranks; make them agree");
    }
    if (setup.network->total_npus() > e.world_size) {
      setup.notes.push_back("the network has " + std::to_string(setup.network->total_npus()) +
                            " NPUs; the workload's " + std::to_string(e.world_size) +
                            " ranks use the first ones");
    }
    e.plan.dims = setup.network->npus_count;
    e.plan.dim_bandwidth = setup.network->bandwidth_gbps;  // themis weighs dimensions by it
    if (flags.goodput) setup.network->goodput = {*flags.goodput};
    if (flags.message_overhead_ns) {
      setup.network->message_overhead_ns = {*flags.message_overhead_ns};
    }
    GENIE_RETURN_IF_ERROR(config::ValidateNetworkConfig(*setup.network));
  }
  if (!flags.topology.empty()) {
    std::vector<int> dims;
    std::string t = flags.topology;
    size_t pos = 0;
    int product = 1;
    while (pos <= t.size()) {
      size_t x = t.find('x', pos);
      std::string part = t.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
      int v = 0;
      try {
        v = std::stoi(part);
      } catch (...) {
        v = 0;
      }
      if (v <= 0) return Status::InvalidArgument("--topology '" + t + "': expected e.g. 8x4");
      dims.push_back(v);
      product *= v;
      if (x == std::string::npos) break;
      pos = x + 1;
    }
    if (product != e.world_size) {
      return Status::InvalidArgument("--topology " + t + " has " + std::to_string(product) +
                                     " ranks but the workload has " +
                                     std::to_string(e.world_size));
    }
    e.plan.dims = dims;
  }

  if (e.plan.inter_dim == collective::InterDimScheduling::kThemis && !setup.network) {
    setup.notes.push_back(
        "inter-dimension-scheduling themis without a network.yml: every "
        "dimension counts as equally fast (pass --network to weigh them)");
  }
  if (!flags.memory_path.empty()) {
    GENIE_ASSIGN_OR_RETURN(setup.memory, config::LoadMemoryConfig(flags.memory_path));
    e.memory = setup.memory;
  }
  if (flags.channels < 1) return Status::InvalidArgument("--channels must be at least 1");
  e.plan.channels = flags.channels;
  if (!flags.slice.empty()) {
    GENIE_ASSIGN_OR_RETURN(e.plan.slice_bytes, ParseBytes(flags.slice));
  }
  e.verify = flags.verify;
  if (!flags.faults.empty()) {
    GENIE_ASSIGN_OR_RETURN(compute::ComputeFaultSchedule faults,
                           compute::LoadComputeFaults(flags.faults));
    GENIE_RETURN_IF_ERROR(compute::CheckRanks(faults, e.world_size));
    setup.network_faults = faults.network_faults;
    for (const auto& f : faults.faults) {
      setup.notes.push_back("compute fault (" + flags.faults + "): " + f.Describe());
    }
    if (!faults.faults.empty()) {
      e.compute_faults = std::make_shared<const compute::ComputeFaultSchedule>(std::move(faults));
    }
  }
  return setup;
}

nlohmann::json RunSetup::ToJson() const {
  nlohmann::json j;
  j["workload"] = {{"dir", files.dir}, {"name", files.name}, {"ranks", files.world_size()},
                   {"comm_group", files.comm_group_path}};
  if (system) j["system"] = system->ToJson();
  if (network) j["network"] = network->ToJson();
  if (memory) j["memory"] = memory->ToJson();
  j["plan"] = {
      {"chunks", exec.plan.chunks},
      {"active_chunks", exec.plan.active_chunks},
      {"channels", exec.plan.channels},
      {"slice_bytes", exec.plan.slice_bytes},
      {"dims", exec.plan.dims},
      {"inter_dimension_scheduling",
       exec.plan.inter_dim == collective::InterDimScheduling::kThemis ? "themis" : "baseline"}};
  nlohmann::json impls = nlohmann::json::object();
  for (const auto& [type, choice] : exec.implementations) {
    std::vector<std::string> names;
    for (auto a : choice.algorithms) names.push_back(collective::AlgorithmName(a));
    impls[CollectiveTypeName(type)] = names;
  }
  j["implementations"] = impls;
  j["notes"] = notes;
  return j;
}

}  // namespace genie::runtime
