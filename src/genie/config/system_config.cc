#include "genie/config/system_config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <spdlog/spdlog.h>

#include "genie/config/json_value_text.h"
#include "genie/config/limits.h"
#include "genie/common/input_file.h"

namespace genie::config {
namespace {

using json = nlohmann::json;

const char* const kCollectives[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all"};

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Reads numbers the way ASTRA-sim's nlohmann assignments do: any JSON number; integer fields
// truncate a fractional value. Strings, lists and objects are errors, and so is a number
// outside the bounds the caller gives (config/limits.h), NaN and infinity included.
class Reader {
 public:
  Reader(const json& j, const std::string& origin) : j_(j), origin_(origin) {}

  Status Error(const std::string& key, const std::string& what) const {
    return Status::InvalidArgument(origin_ + ": key \"" + key + "\": " + what);
  }
  bool Has(const char* key) const { return j_.contains(key); }

  // A number in [lo, hi] (or exactly 0 when `zero_ok`: "not given"). `unit` ("ns", "GB/s")
  // follows the bounds in the error.
  Status Number(const char* key, double* out, double lo, double hi, const char* unit,
                bool zero_ok = false) const {
    if (!j_.contains(key)) return Status::Ok();
    const json& v = j_[key];
    if (!v.is_number()) return Error(key, "expected a number, found " + JsonValueText(v));
    const double d = v.get<double>();
    if (!(d >= lo && d <= hi) && !(zero_ok && d == 0)) return RangeError(key, d, lo, hi, unit, zero_ok);
    *out = d;
    return Status::Ok();
  }
  // An integer in [lo, hi]; a fractional value is truncated first, as ASTRA-sim does.
  template <typename Int>
  Status Integer(const char* key, Int* out, Int lo, Int hi, const char* unit) const {
    double d = static_cast<double>(*out);
    GENIE_RETURN_IF_ERROR(Number(key, &d, -std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::max(), unit));
    d = std::trunc(d);
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi))) {
      return RangeError(key, d, static_cast<double>(lo), static_cast<double>(hi), unit, false);
    }
    *out = static_cast<Int>(d);
    return Status::Ok();
  }
  Status RangeError(const char* key, double d, double lo, double hi, const char* unit,
                    bool zero_ok) const {
    const std::string u = *unit ? std::string(" ") + unit : "";
    return Error(key, Num(d) + " is out of range; give " + (zero_ok ? "0 or " : "") +
                          "a number from " + Num(lo) + " to " + Num(hi) + u);
  }
  // ASTRA-sim tests `j[key] != 0`: accept 0/1 and true/false.
  Status Flag(const char* key, bool* out) const {
    if (!j_.contains(key)) return Status::Ok();
    const json& v = j_[key];
    if (v.is_boolean()) {
      *out = v.get<bool>();
    } else if (v.is_number()) {
      *out = v.get<double>() != 0;
    } else {
      return Error(key, "expected 0/1 or true/false, found " + JsonValueText(v));
    }
    return Status::Ok();
  }
  Status String(const char* key, std::string* out) const {
    if (!j_.contains(key)) return Status::Ok();
    const json& v = j_[key];
    if (!v.is_string()) return Error(key, "expected a string, found " + JsonValueText(v));
    *out = v.get<std::string>();
    return Status::Ok();
  }
  // A list of strings; a single string is accepted as a one-element list.
  Status StringList(const std::string& key, std::vector<std::string>* out) const {
    const json& v = j_[key];
    if (v.is_string()) {
      out->push_back(v.get<std::string>());
      return Status::Ok();
    }
    if (!v.is_array()) {
      return Error(key, "expected a list of strings, found " + JsonValueText(v));
    }
    for (const json& e : v) {
      if (!e.is_string()) {
        return Error(key, "expected a list of strings, found " + JsonValueText(e) + " in it");
      }
      out->push_back(e.get<std::string>());
    }
    return Status::Ok();
  }

 private:
  const json& j_;
  const std::string& origin_;
};

bool KnownKey(const std::string& key) {
  static const std::set<std::string> kKnown = {
      "scheduling-policy", "endpoint-delay", "active-chunks-per-dimension",
      "preferred-dataset-splits", "all-reduce-implementation", "all-gather-implementation",
      "reduce-scatter-implementation", "all-to-all-implementation",
      "all-reduce-implementation-custom", "all-gather-implementation-custom",
      "reduce-scatter-implementation-custom", "all-to-all-implementation-custom",
      "collective-optimization", "local-mem-bw", "local-reduction-delay", "peak-perf",
      "roofline-enabled", "replay-only", "trace-enabled", "track-local-mem", "L", "o", "g", "G",
      "model-shared-bus", "boost-mode", "intra-dimension-scheduling",
      "inter-dimension-scheduling"};
  return kKnown.count(key) != 0;
}

// What genie does instead for each key it reads but does not model (docs/configs.md,
// "Every ASTRA-sim key"). A key whose default is what genie does (boost-mode 0,
// intra-dimension-scheduling FIFO, replay-only 0, ...) is named only when set otherwise.
std::vector<std::string> UnmodelledKeys(const SystemConfig& c) {
  std::vector<std::string> out;
  auto key = [](const char* k) { return std::string("key \"") + k + "\": "; };
  if (c.boost_mode != 0) {
    out.push_back(key("boost-mode") +
                  "1 is not modelled (today's ASTRA-sim does not read it either); genie "
                  "simulates every NPU, as with boost-mode 0");
  }
  if (c.intra_dimension_scheduling != "FIFO") {
    out.push_back(key("intra-dimension-scheduling") + "\"" + c.intra_dimension_scheduling +
                  "\" is not modelled (ASTRA-sim dropped it with its graph engine); genie admits "
                  "waiting chunks into a dimension in scheduling-policy order (" +
                  SchedulingPolicyName(c.scheduling_policy) + ")");
  }
  if (c.Has("inter-dimension-scheduling") && c.inter_dimension_scheduling != "baseline" &&
      c.inter_dimension_scheduling != "themis") {
    out.push_back(key("inter-dimension-scheduling") + "\"" + c.inter_dimension_scheduling +
                  "\" is not modelled (ASTRA-sim dropped it with its graph engine); genie runs "
                  "every chunk through the dimensions in ascending order (baseline)");
  }
  if (c.replay_only) {
    out.push_back(key("replay-only") +
                  "1 is not modelled: ASTRA-sim then replays every node, communication too, for "
                  "its recorded duration; genie simulates communication on the network and "
                  "replays recorded durations for compute only");
  }
  if (c.trace_enabled) {
    out.push_back(key("trace-enabled") +
                  "1 asks for ASTRA-sim's debug log of issued nodes, which genie does not "
                  "print; genie's timeline is in its results (--record, genie report)");
  }
  if (c.track_local_mem) {
    out.push_back(key("track-local-mem") +
                  "1 is not modelled: genie does not track local memory use per node");
  }
  if (c.Has("local-reduction-delay")) {
    out.push_back(
        "key \"local-reduction-delay\" is used only by ASTRA-sim's shared-bus (LogGP) model, "
        "which genie does not implement; genie charges a reduction 3 x floor(bytes / "
        "local-mem-bw) ns");
  }
  if (!c.model_shared_bus) {
    for (const char* k : {"L", "o", "g", "G"}) {
      if (c.Has(k)) {
        out.push_back("key \"" + std::string(k) +
                      "\" is a LogGP parameter of the shared memory bus, used only with "
                      "model-shared-bus: 1 (as in ASTRA-sim); not used");
      }
    }
  }
  return out;
}

}  // namespace

const char* SchedulingPolicyName(SchedulingPolicy p) {
  switch (p) {
    case SchedulingPolicy::kLifo: return "LIFO";
    case SchedulingPolicy::kFifo: return "FIFO";
    case SchedulingPolicy::kExplicit: return "EXPLICIT";
  }
  return "?";
}

const char* CollectiveOptimizationName(CollectiveOptimization o) {
  return o == CollectiveOptimization::kBaseline ? "baseline" : "localBWAware";
}

std::string CollectiveImpl::ToString() const {
  if (direct_window > 0 && (name == "direct" || name == "oneDirect")) {
    return name + std::to_string(direct_window);
  }
  return name;
}

Result<CollectiveImpl> ParseCollectiveImpl(const std::string& text) {
  static const char* const kPlain[] = {"ring", "oneRing", "doubleBinaryTree", "halvingDoubling",
                                       "oneHalvingDoubling"};
  for (const char* p : kPlain) {
    if (text == p) return CollectiveImpl{text, -1};
  }
  // ASTRA-sim: "direct" / "directK" / "oneDirect" / "oneDirectK".
  for (const std::string prefix : {"oneDirect", "direct"}) {
    if (text.rfind(prefix, 0) != 0) continue;
    std::string rest = text.substr(prefix.size());
    if (rest.empty()) return CollectiveImpl{prefix, -1};
    char* end = nullptr;
    long k = std::strtol(rest.c_str(), &end, 10);
    if (*end != '\0' || k <= 0) break;
    return CollectiveImpl{prefix, static_cast<int>(k)};
  }
  return Status::InvalidArgument(
      "unknown collective implementation \"" + text +
      "\" (use ring, oneRing, direct, directK, oneDirect, oneDirectK, halvingDoubling, "
      "oneHalvingDoubling or doubleBinaryTree)");
}

const std::vector<CollectiveImpl>* SystemConfig::ImplementationsFor(
    const std::string& collective) const {
  auto it = implementations.find(collective);
  return it == implementations.end() ? nullptr : &it->second;
}

nlohmann::json SystemConfig::ToJson() const {
  json j;
  j["path"] = path;
  j["scheduling-policy"] = SchedulingPolicyName(scheduling_policy);
  j["endpoint-delay"] = endpoint_delay_ns;
  j["active-chunks-per-dimension"] = active_chunks_per_dimension;
  j["preferred-dataset-splits"] = preferred_dataset_splits;
  for (const auto& [coll, impls] : implementations) {
    json list = json::array();
    for (const CollectiveImpl& i : impls) list.push_back(i.ToString());
    j[coll + "-implementation"] = list;
  }
  for (const auto& [coll, prefix] : custom_implementations) {
    j[coll + "-implementation-custom"] = json::array({prefix});
  }
  j["collective-optimization"] = CollectiveOptimizationName(collective_optimization);
  j["local-mem-bw"] = local_mem_bw_gbps;
  j["local-reduction-delay"] = local_reduction_delay_ns;
  j["peak-perf"] = peak_perf_tflops;
  j["roofline-enabled"] = roofline_enabled ? 1 : 0;
  j["replay-only"] = replay_only ? 1 : 0;
  j["trace-enabled"] = trace_enabled ? 1 : 0;
  j["track-local-mem"] = track_local_mem ? 1 : 0;
  j["L"] = L;
  j["o"] = o;
  j["g"] = g;
  j["G"] = G;
  j["model-shared-bus"] = model_shared_bus ? 1 : 0;
  j["boost-mode"] = boost_mode;
  j["intra-dimension-scheduling"] = intra_dimension_scheduling;
  j["inter-dimension-scheduling"] = inter_dimension_scheduling;
  j["keys-set-by-file"] = present_keys;
  j["ignored-keys"] = ignored_keys;
  if (!unmodelled.empty()) j["unmodelled-keys"] = unmodelled;
  if (!Has("preferred-dataset-splits")) {
    j["notes"].push_back("preferred-dataset-splits absent: genie uses 1 (ASTRA-sim leaves 0)");
  }
  return j;
}

Result<SystemConfig> ParseSystemConfig(const std::string& text, const std::string& origin) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (j.is_discarded()) {
    return Status::InvalidArgument(origin + ": not valid JSON (check commas and quotes)");
  }
  if (!j.is_object()) {
    return Status::InvalidArgument(origin + ": expected a JSON object of system settings");
  }
  SystemConfig c;
  c.path = origin;
  Reader r(j, origin);
  for (const auto& item : j.items()) {
    c.present_keys.insert(item.key());
    if (!KnownKey(item.key())) c.ignored_keys.push_back(item.key());
  }

  std::string policy;
  GENIE_RETURN_IF_ERROR(r.String("scheduling-policy", &policy));
  if (r.Has("scheduling-policy")) {
    if (policy == "LIFO") {
      c.scheduling_policy = SchedulingPolicy::kLifo;
    } else if (policy == "FIFO") {
      c.scheduling_policy = SchedulingPolicy::kFifo;
    } else if (policy == "EXPLICIT") {
      c.scheduling_policy = SchedulingPolicy::kExplicit;
    } else {
      return r.Error("scheduling-policy", "unknown value \"" + policy +
                                              "\" (use LIFO, FIFO or EXPLICIT)");
    }
  }

  const auto kMaxDelay = static_cast<TimeNs>(kMaxDelayNs);
  GENIE_RETURN_IF_ERROR(r.Integer("endpoint-delay", &c.endpoint_delay_ns, TimeNs{0}, kMaxDelay, "ns"));
  GENIE_RETURN_IF_ERROR(r.Integer("active-chunks-per-dimension", &c.active_chunks_per_dimension,
                                  1, kMaxDatasetSplits, ""));
  GENIE_RETURN_IF_ERROR(r.Integer("preferred-dataset-splits", &c.preferred_dataset_splits, 1,
                                  kMaxDatasetSplits, ""));

  for (const char* coll : kCollectives) {
    std::string key = std::string(coll) + "-implementation";
    if (j.contains(key)) {
      std::vector<std::string> names;
      GENIE_RETURN_IF_ERROR(r.StringList(key, &names));
      if (names.empty()) return r.Error(key, "needs at least one algorithm (one per dimension)");
      std::vector<CollectiveImpl> impls;
      for (const std::string& n : names) {
        auto impl = ParseCollectiveImpl(n);
        if (!impl.ok()) return r.Error(key, impl.status().message());
        impls.push_back(*impl);
      }
      c.implementations[coll] = std::move(impls);
    }
    std::string custom_key = key + "-custom";
    if (j.contains(custom_key)) {
      std::vector<std::string> paths;
      GENIE_RETURN_IF_ERROR(r.StringList(custom_key, &paths));
      if (paths.size() != 1) {
        return r.Error(custom_key,
                       "must list exactly one Chakra ET prefix (it covers all dimensions)");
      }
      c.custom_implementations[coll] = paths[0];
    }
  }

  std::string opt;
  GENIE_RETURN_IF_ERROR(r.String("collective-optimization", &opt));
  if (r.Has("collective-optimization")) {
    if (opt == "baseline") {
      c.collective_optimization = CollectiveOptimization::kBaseline;
    } else if (opt == "localBWAware") {
      c.collective_optimization = CollectiveOptimization::kLocalBwAware;
    } else {
      return r.Error("collective-optimization",
                     "unknown value \"" + opt + "\" (use baseline or localBWAware)");
    }
  }

  GENIE_RETURN_IF_ERROR(r.Number("local-mem-bw", &c.local_mem_bw_gbps, kMinBandwidthGbps,
                                 kMaxBandwidthGbps, "GB/s", /*zero_ok=*/true));
  GENIE_RETURN_IF_ERROR(r.Integer("local-reduction-delay", &c.local_reduction_delay_ns, TimeNs{0},
                                  kMaxDelay, "ns"));
  GENIE_RETURN_IF_ERROR(r.Number("peak-perf", &c.peak_perf_tflops, kMinPeakTflops,
                                 kMaxPeakTflops, "TFLOPS", /*zero_ok=*/true));
  GENIE_RETURN_IF_ERROR(r.Flag("roofline-enabled", &c.roofline_enabled));
  GENIE_RETURN_IF_ERROR(r.Flag("replay-only", &c.replay_only));
  GENIE_RETURN_IF_ERROR(r.Flag("trace-enabled", &c.trace_enabled));
  GENIE_RETURN_IF_ERROR(r.Flag("track-local-mem", &c.track_local_mem));
  // LogGP: latency, overhead and gap in ns, gap per byte in ns/B.
  for (auto [key, field] : {std::pair{"L", &c.L}, std::pair{"o", &c.o}, std::pair{"g", &c.g},
                            std::pair{"G", &c.G}}) {
    GENIE_RETURN_IF_ERROR(r.Number(key, field, 0, kMaxDelayNs, "ns"));
  }
  GENIE_RETURN_IF_ERROR(r.Flag("model-shared-bus", &c.model_shared_bus));
  GENIE_RETURN_IF_ERROR(r.Integer("boost-mode", &c.boost_mode, 0, 1, ""));

  GENIE_RETURN_IF_ERROR(r.String("intra-dimension-scheduling", &c.intra_dimension_scheduling));
  static const std::set<std::string> kIntra = {"FIFO", "RG", "smallestFirst",
                                               "lessRemainingPhaseFirst"};
  if (!kIntra.count(c.intra_dimension_scheduling)) {
    return r.Error("intra-dimension-scheduling",
                   "unknown value \"" + c.intra_dimension_scheduling +
                       "\" (use FIFO, RG, smallestFirst or lessRemainingPhaseFirst)");
  }
  GENIE_RETURN_IF_ERROR(r.String("inter-dimension-scheduling", &c.inter_dimension_scheduling));
  static const std::set<std::string> kInter = {"baseline", "themis", "enforcedRoundRobin",
                                               "offlineGreedy", "offlineGreedyFlex"};
  if (!kInter.count(c.inter_dimension_scheduling)) {
    return r.Error("inter-dimension-scheduling",
                   "unknown value \"" + c.inter_dimension_scheduling +
                       "\" (use baseline, themis, enforcedRoundRobin, offlineGreedy or "
                       "offlineGreedyFlex)");
  }

  for (const std::string& k : c.ignored_keys) {
    spdlog::warn("{}: ignoring unknown system key \"{}\" (ASTRA-sim ignores it too)", origin, k);
  }
  c.unmodelled = UnmodelledKeys(c);
  for (const std::string& w : c.unmodelled) spdlog::warn("{}: {}", origin, w);
  return c;
}

Result<SystemConfig> LoadSystemConfig(const std::string& path) {
  GENIE_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, "system configuration"));
  return ParseSystemConfig(text, path);
}

}  // namespace genie::config
