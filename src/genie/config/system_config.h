// SystemConfig: ASTRA-sim's system.json (`--system-configuration`) parsed into typed fields —
// collective algorithms per dimension, chunking, scheduling, local costs, compute model.
// Every key ASTRA-sim's Sys::initialize_sys reads is accepted, with ASTRA-sim's defaults; an
// unknown value (e.g. "scheduling-policy": "RANDOM") is an error naming the file and key; an
// unknown key is kept in `ignored_keys` and logged, as ASTRA-sim ignores it too; a known key
// genie does not model is named in `unmodelled` with what genie does instead, and logged.
// Value type, built once at start-up; any thread may read it.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::config {

enum class SchedulingPolicy { kLifo, kFifo, kExplicit };
enum class CollectiveOptimization { kBaseline, kLocalBwAware };

const char* SchedulingPolicyName(SchedulingPolicy p);          // "LIFO", "FIFO", "EXPLICIT"
const char* CollectiveOptimizationName(CollectiveOptimization o);  // "baseline", "localBWAware"

// One entry of an *-implementation list: "ring", "direct", "direct4" (window 4), ...
struct CollectiveImpl {
  std::string name;        // canonical: ring oneRing direct oneDirect halvingDoubling
                           // oneHalvingDoubling doubleBinaryTree
  int direct_window = -1;  // directK / oneDirectK: K; -1 = unlimited (ASTRA-sim's default)
  std::string ToString() const;  // back to the system.json spelling ("direct4")
  bool operator==(const CollectiveImpl&) const = default;
};

// Parses one implementation name the way ASTRA-sim does ("direct8" -> direct, window 8).
Result<CollectiveImpl> ParseCollectiveImpl(const std::string& text);

struct SystemConfig {
  std::string path;  // where it was read from ("" when parsed from a string)

  SchedulingPolicy scheduling_policy = SchedulingPolicy::kLifo;
  TimeNs endpoint_delay_ns = 10;        // "endpoint-delay" (ASTRA-sim default 10)
  int active_chunks_per_dimension = 1;  // "active-chunks-per-dimension"
  // "preferred-dataset-splits": ASTRA-sim leaves it 0 when absent (and then divides by it);
  // genie treats absent as 1 and says so in ToJson.
  int preferred_dataset_splits = 1;
  // Per collective type, one entry per logical dimension. Keys: "all-reduce", "all-gather",
  // "reduce-scatter", "all-to-all". Absent = not configured (the executor picks its default).
  std::map<std::string, std::vector<CollectiveImpl>> implementations;
  // "*-implementation-custom": a Chakra ET prefix per collective type (ASTRA-sim requires a
  // list of exactly one path; stored as written, relative to the working directory).
  std::map<std::string, std::string> custom_implementations;
  CollectiveOptimization collective_optimization = CollectiveOptimization::kBaseline;
  double local_mem_bw_gbps = 0;         // "local-mem-bw" (GB/s; 0 = not given)
  TimeNs local_reduction_delay_ns = 1;  // "local-reduction-delay" (ASTRA-sim default 1)
  double peak_perf_tflops = 0;          // "peak-perf"
  bool roofline_enabled = false;        // "roofline-enabled"
  bool replay_only = false;             // "replay-only"
  bool trace_enabled = false;           // "trace-enabled"
  bool track_local_mem = false;         // "track-local-mem"
  double L = 0, o = 0, g = 0, G = 0;    // LogGP memory-bus model parameters
  bool model_shared_bus = false;        // "model-shared-bus"
  int boost_mode = 0;                   // "boost-mode" (accepted, not modelled: a warning)
  std::string intra_dimension_scheduling = "FIFO";      // older ASTRA-sim key
  std::string inter_dimension_scheduling = "baseline";  // older ASTRA-sim key

  std::set<std::string> present_keys;      // keys the file actually set
  std::vector<std::string> ignored_keys;   // keys genie does not know (logged, not an error)
  // One line per key the file set that genie reads but does not model, saying what genie does
  // instead (logged as warnings when parsed; docs/configs.md lists every key).
  std::vector<std::string> unmodelled;

  bool Has(const std::string& key) const { return present_keys.count(key) != 0; }
  // The implementations for `collective` ("all-reduce", ...), or nullptr when not configured.
  const std::vector<CollectiveImpl>* ImplementationsFor(const std::string& collective) const;
  // Every field, with ASTRA-sim's key names, for provenance in result files.
  nlohmann::json ToJson() const;
};

// Reads and validates a system.json. Errors name the file and the key and say what to fix.
Result<SystemConfig> LoadSystemConfig(const std::string& path);
// Same, from text; `origin` names the source in errors.
Result<SystemConfig> ParseSystemConfig(const std::string& text, const std::string& origin);

}  // namespace genie::config
