#include "genie/config/network_config.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>

#include "genie/config/limits.h"
#include "genie/common/input_file.h"

namespace genie::config {
namespace {

// The longest probe_rtt interval: a day, far past any simulated step (and finite).
constexpr double kMaxProbeIntervalNs = 86400e9;

std::string Where(const std::string& origin, const char* key) {
  return (origin.empty() ? std::string("network configuration") : origin) + ": key \"" + key +
         "\"";
}

constexpr const char* kRatioHint =
    "give the ratio of a leaf's host-facing capacity (npus_count[L] x bandwidth[L], L the "
    "leaf_dimension, 0 by default) to its "
    "uplink capacity (spines x spine_bandwidth), above 0 and at most 1e6, like "
    "oversubscription: 4 for 4:1 (1: non-blocking)";

constexpr const char* kSpineRatioHint =
    "give the ratio of a spine's leaf-facing capacity (leaves per pod x spine_bandwidth) to its "
    "uplink capacity (super_spines / spines x super_spine_bandwidth), above 0 and at most 1e6, "
    "like spine_oversubscription: 2 for 2:1 (1: non-blocking)";

// The leaves of one pod (a third tier): one per coordinate below the leaf dimension L and on
// dimension L + 1. npus_count must hold L + 2 entries.
double LeavesPerPod(const NetworkConfig& c) {
  double leaves = c.npus_count[c.leaf_spine.leaf_dimension + 1];
  for (int d = 0; d < c.leaf_spine.leaf_dimension; ++d) leaves *= c.npus_count[d];
  return leaves;
}

// Whether `a` is `b` to the precision a hand-written decimal carries.
bool Agrees(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::fabs(b); }

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A YAML list (or a single scalar, taken as a one-element list) of T.
template <typename T>
Status ReadList(const YAML::Node& root, const char* key, const std::string& origin,
                std::vector<T>* out) {
  YAML::Node node = root[key];
  if (!node) {
    return Status::InvalidArgument(Where(origin, key) +
                                   " is missing (give one value per dimension)");
  }
  try {
    if (node.IsScalar()) {
      out->push_back(node.as<T>());
    } else if (node.IsSequence()) {
      for (const YAML::Node& e : node) out->push_back(e.as<T>());
    } else {
      return Status::InvalidArgument(Where(origin, key) + ": expected a list like [ 8 ]");
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(Where(origin, key) + ": " + e.msg +
                                   " (line " + std::to_string(e.mark.line + 1) + ")");
  }
  return Status::Ok();
}

// One scalar of type T under `key`, into `out`.
template <typename T>
Status ReadScalar(const YAML::Node& root, const char* key, const std::string& origin, T* out) {
  const YAML::Node node = root[key];
  if (!node.IsScalar()) {
    return Status::InvalidArgument(Where(origin, key) + ": expected one value, like " + key +
                                   ": 2");
  }
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(Where(origin, key) + ": " + e.msg + " (line " +
                                   std::to_string(e.mark.line + 1) + ")");
  }
  return Status::Ok();
}

// A list of [bytes, ns] pairs (message_times, burst_message_times); absent: left empty.
Status ReadTimes(const YAML::Node& root, const char* key, const std::string& origin,
                 std::vector<std::pair<double, double>>* out) {
  const YAML::Node node = root[key];
  if (!node) return Status::Ok();
  const std::string form = std::string(": expected a list of [bytes, ns] pairs, like ") + key +
                           ": [ [8192, 90000], [65536, 560000] ]";
  if (!node.IsSequence()) return Status::InvalidArgument(Where(origin, key) + form);
  try {
    for (const YAML::Node& e : node) {
      if (!e.IsSequence() || e.size() != 2) {
        return Status::InvalidArgument(Where(origin, key) + form);
      }
      out->emplace_back(e[0].as<double>(), e[1].as<double>());
    }
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(Where(origin, key) + ": " + e.msg + form);
  }
  return Status::Ok();
}

// The third tier's keys: `super_spines` turns them on and then needs `super_spine_latency` and
// `super_spine_bandwidth` or `spine_oversubscription` (or both, agreeing).
Status ParseSuperSpines(const YAML::Node& root, const std::string& origin,
                        const NetworkConfig& c, LeafSpineConfig* ls) {
  if (!root["super_spines"]) {
    for (const char* key :
         {"super_spine_bandwidth", "super_spine_latency", "spine_oversubscription"}) {
      if (root[key]) {
        return Status::InvalidArgument(Where(origin, key) +
                                       " describes a third tier but \"super_spines\" is "
                                       "missing; give super_spines: K (the number of "
                                       "super-spines)");
      }
    }
    return Status::Ok();
  }
  GENIE_RETURN_IF_ERROR(ReadScalar(root, "super_spines", origin, &ls->super_spines));
  if (ls->super_spines < 1) {
    return Status::InvalidArgument(Where(origin, "super_spines") + ": " +
                                   std::to_string(ls->super_spines) +
                                   " is out of range; give 1 or more super-spines");
  }
  const bool ratio = static_cast<bool>(root["spine_oversubscription"]);
  if (!root["super_spine_latency"] || !(root["super_spine_bandwidth"] || ratio)) {
    return Status::InvalidArgument(
        Where(origin, root["super_spine_latency"] ? "super_spine_bandwidth"
                                                  : "super_spine_latency") +
        " is missing: a third tier (super_spines) needs super_spine_bandwidth (GB/s per "
        "spine-super-spine link) or spine_oversubscription (a spine's leaf capacity : uplink "
        "capacity), and super_spine_latency (ns per spine-super-spine link)");
  }
  GENIE_RETURN_IF_ERROR(ReadScalar(root, "super_spine_latency", origin, &ls->super_latency_ns));
  if (ratio) {
    GENIE_RETURN_IF_ERROR(
        ReadScalar(root, "spine_oversubscription", origin, &ls->spine_oversubscription));
    if (!(ls->spine_oversubscription > 0)) {
      return Status::InvalidArgument(Where(origin, "spine_oversubscription") + ": " +
                                     Number(ls->spine_oversubscription) + " is out of range; " +
                                     kSpineRatioHint);
    }
  }
  if (root["super_spine_bandwidth"]) {
    GENIE_RETURN_IF_ERROR(
        ReadScalar(root, "super_spine_bandwidth", origin, &ls->super_bandwidth_gbps));
  } else if (ls->leaf_dimension >= 0 && c.npus_count.size() > ls->leaf_dimension + 1u &&
             ls->super_spines % ls->spines == 0) {
    // A spine's uplinks carry 1/R2 of what its leaves' uplinks to it can, over K/S super-spines.
    // (Otherwise validation names what is wrong first.)
    ls->super_bandwidth_gbps = LeavesPerPod(c) * ls->bandwidth_gbps /
                               (ls->spine_oversubscription * (ls->super_spines / ls->spines));
  }
  return Status::Ok();
}

// The flow model's leaf-spine keys: `spines` turns them on and then needs `spine_latency` and
// `spine_bandwidth` or `oversubscription` (or both, agreeing); `ecmp` is optional (split, the
// only mode).
Status ParseLeafSpine(const YAML::Node& root, const std::string& origin, const NetworkConfig& c,
                      LeafSpineConfig* ls) {
  if (!root["spines"]) {
    for (const char* key :
         {"spine_bandwidth", "spine_latency", "ecmp", "ecmp_routes", "ecmp_connections",
          "oversubscription",
          "leaf_dimension", "super_spines", "super_spine_bandwidth", "super_spine_latency",
          "spine_oversubscription"}) {
      if (root[key]) {
        return Status::InvalidArgument(Where(origin, key) +
                                       " describes a leaf-spine fabric but \"spines\" is "
                                       "missing; give spines: S (the number of spines)");
      }
    }
    return Status::Ok();
  }
  GENIE_RETURN_IF_ERROR(ReadScalar(root, "spines", origin, &ls->spines));
  if (ls->spines < 1) {
    return Status::InvalidArgument(Where(origin, "spines") + ": " + std::to_string(ls->spines) +
                                   " is out of range; give 1 or more spines");
  }
  const bool ratio = static_cast<bool>(root["oversubscription"]);
  for (const char* key : {"spine_bandwidth", "spine_latency"}) {
    if (!root[key] && !(ratio && std::string(key) == "spine_bandwidth")) {
      return Status::InvalidArgument(Where(origin, key) +
                                     " is missing: a leaf-spine fabric (spines) needs "
                                     "spine_bandwidth (GB/s per leaf-spine link) or "
                                     "oversubscription (host capacity : uplink capacity), and "
                                     "spine_latency (ns per leaf-spine link)");
    }
  }
  GENIE_RETURN_IF_ERROR(ReadScalar(root, "spine_latency", origin, &ls->latency_ns));
  if (root["leaf_dimension"]) {
    GENIE_RETURN_IF_ERROR(ReadScalar(root, "leaf_dimension", origin, &ls->leaf_dimension));
  }
  const size_t leaf = ls->leaf_dimension >= 0 ? static_cast<size_t>(ls->leaf_dimension) : 0;
  if (ratio) {
    GENIE_RETURN_IF_ERROR(ReadScalar(root, "oversubscription", origin, &ls->oversubscription));
    if (!(ls->oversubscription > 0)) {  // 0 would read as "not given"; the range is validated
      return Status::InvalidArgument(Where(origin, "oversubscription") + ": " +
                                     Number(ls->oversubscription) + " is out of range; " +
                                     kRatioHint);
    }
  }
  if (root["spine_bandwidth"]) {
    GENIE_RETURN_IF_ERROR(ReadScalar(root, "spine_bandwidth", origin, &ls->bandwidth_gbps));
  } else if (c.npus_count.size() > leaf && c.bandwidth_gbps.size() > leaf) {
    // The leaf's uplinks carry 1/R of what its hosts' links can send, over S spines. (With
    // npus_count or bandwidth short, validation names them first.)
    ls->bandwidth_gbps =
        c.npus_count[leaf] * c.bandwidth_gbps[leaf] / (ls->oversubscription * ls->spines);
  }
  if (root["ecmp"]) {
    std::string mode;
    GENIE_RETURN_IF_ERROR(ReadScalar(root, "ecmp", origin, &mode));
    if (mode != "split") {
      return Status::InvalidArgument(
          Where(origin, "ecmp") + ": unknown mode \"" + mode +
          "\" (use split: every message spread evenly over the spines, as when the testbed's "
          "hash is unknown)");
    }
    ls->ecmp = EcmpMode::kSplit;
  }
  if (root["ecmp_routes"]) {
    const YAML::Node node = root["ecmp_routes"];
    const char* form = ": expected a list of [src_host, dst_host, spine] triples, like "
                       "ecmp_routes: [ [0, 4, 1], [4, 0, 0] ]";
    if (!node.IsSequence()) return Status::InvalidArgument(Where(origin, "ecmp_routes") + form);
    try {
      for (const YAML::Node& e : node) {
        if (!e.IsSequence() || e.size() != 3) {
          return Status::InvalidArgument(Where(origin, "ecmp_routes") + form);
        }
        ls->routes.push_back({e[0].as<int>(), e[1].as<int>(), e[2].as<int>()});
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(Where(origin, "ecmp_routes") + ": " + e.msg + " (line " +
                                     std::to_string(e.mark.line + 1) + ")" + form);
    }
  }
  if (root["ecmp_connections"]) {
    const YAML::Node node = root["ecmp_connections"];
    const char* form = ": expected a list of [src, dst, channel, spine], like "
                       "ecmp_connections: [ [0, 4, 0, 1], [4, 0, 0, 0] ]";
    if (!node.IsSequence()) {
      return Status::InvalidArgument(Where(origin, "ecmp_connections") + form);
    }
    try {
      for (const YAML::Node& e : node) {
        if (!e.IsSequence() || e.size() != 4) {
          return Status::InvalidArgument(Where(origin, "ecmp_connections") + form);
        }
        ls->connections.push_back({e[0].as<int>(), e[1].as<int>(), e[2].as<int>(), e[3].as<int>()});
      }
    } catch (const YAML::Exception& e) {
      return Status::InvalidArgument(Where(origin, "ecmp_connections") + ": " + e.msg +
                                     " (line " + std::to_string(e.mark.line + 1) + ")" + form);
    }
  }
  return ParseSuperSpines(root, origin, c, ls);
}

// The third tier's checks, after the leaf-spine's (L is in range, dimensions L and L + 1 are
// Switch).
Status ValidateSuperSpines(const NetworkConfig& c) {
  const std::string& o = c.path;
  const LeafSpineConfig& ls = c.leaf_spine;
  const int L = ls.leaf_dimension;
  if (ls.super_spines < 1) {
    return Status::InvalidArgument(Where(o, "super_spines") + ": " +
                                   std::to_string(ls.super_spines) +
                                   " is out of range; give 1 or more super-spines");
  }
  if (L + 2 >= c.dims() || c.topology[L + 2] != TopologyKind::kSwitch) {
    return Status::InvalidArgument(
        Where(o, "super_spines") + ": a third tier needs dimension " + std::to_string(L + 2) +
        " (the pods, after the hosts of a leaf on dimension " + std::to_string(L) +
        " and the leaves of a pod on dimension " + std::to_string(L + 1) + ") to be Switch; " +
        (L + 2 >= c.dims() ? "the topology has " + std::to_string(c.dims()) + " dimensions"
                           : std::string("it is ") + TopologyKindName(c.topology[L + 2])) +
        "; add a Switch dimension of pods or drop the super_spine keys");
  }
  if (ls.super_spines > kMaxSpines || ls.super_spines % ls.spines != 0) {
    return Status::InvalidArgument(
        Where(o, "super_spines") + ": " + std::to_string(ls.super_spines) +
        " is not a multiple of spines (" + std::to_string(ls.spines) + ", per pod) up to " +
        std::to_string(kMaxSpines) + "; spine s of every pod joins the super_spines / spines "
        "super-spines of plane s, so give a multiple such as " + std::to_string(ls.spines * 2));
  }
  if (!ls.routes.empty() || !ls.connections.empty()) {
    return Status::InvalidArgument(Where(o, "ecmp_routes") +
                                   ": pairs of hosts on a known spine are read on two tiers "
                                   "only (the testbed's); drop ecmp_routes or super_spines");
  }
  if (ls.spine_oversubscription != 0) {
    const double r = ls.spine_oversubscription;
    if (!(r > 0 && r <= 1e6)) {
      return Status::InvalidArgument(Where(o, "spine_oversubscription") + ": " + Number(r) +
                                     " is out of range; " + kSpineRatioHint);
    }
    const int per_plane = ls.super_spines / ls.spines;
    const double uplink = LeavesPerPod(c) * ls.bandwidth_gbps / (r * per_plane);
    if (!Agrees(ls.super_bandwidth_gbps, uplink)) {
      return Status::InvalidArgument(
          Where(o, "super_spine_bandwidth") + ": " + Number(ls.super_bandwidth_gbps) +
          " GB/s contradicts spine_oversubscription " + Number(r) + ", which gives " +
          Number(LeavesPerPod(c)) + " leaves per pod x " + Number(ls.bandwidth_gbps) +
          " GB/s / (" + Number(r) + " x " + std::to_string(per_plane) +
          " super-spines per plane) = " + Number(uplink) +
          " GB/s per spine-super-spine link; drop one of the two");
    }
    // As for the leaves: ASTRA-sim's per-rank view of the pods' dimension carries the ratio.
    const double share = c.bandwidth_gbps[L + 1] / r;
    if (!Agrees(c.bandwidth_gbps[L + 2], share)) {
      return Status::InvalidArgument(
          Where(o, "bandwidth") + ": dimension " + std::to_string(L + 2) + "'s " +
          Number(c.bandwidth_gbps[L + 2]) +
          " GB/s is not a rank's share of its pod's uplinks at spine_oversubscription " +
          Number(r) + " (bandwidth[" + std::to_string(L + 1) + "] / " + Number(r) + " = " +
          Number(share) + " GB/s), which ASTRA-sim and the aware and unaware models read; give "
          "that value");
    }
  }
  if (!(ls.super_bandwidth_gbps >= kMinBandwidthGbps &&
        ls.super_bandwidth_gbps <= kMaxBandwidthGbps)) {
    return Status::InvalidArgument(Where(o, "super_spine_bandwidth") + ": " +
                                   Number(ls.super_bandwidth_gbps) +
                                   " is out of range; give GB/s per spine-super-spine link "
                                   "between " + Number(kMinBandwidthGbps) + " and " +
                                   Number(kMaxBandwidthGbps));
  }
  if (!(ls.super_latency_ns >= 0 && ls.super_latency_ns <= kMaxDelayNs)) {
    return Status::InvalidArgument(Where(o, "super_spine_latency") + ": " +
                                   Number(ls.super_latency_ns) +
                                   " is out of range; give ns per spine-super-spine link between "
                                   "0 and " + Number(kMaxDelayNs) + " (1,000 s)");
  }
  return Status::Ok();
}

}  // namespace

const char* TopologyKindName(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::kRing: return "Ring";
    case TopologyKind::kFullyConnected: return "FullyConnected";
    case TopologyKind::kSwitch: return "Switch";
  }
  return "?";
}

int NetworkConfig::total_npus() const {
  int n = 1;
  for (int c : npus_count) n *= c;
  return n;
}

double NetworkConfig::GoodputOf(int dim) const {
  if (goodput.empty()) return kDefaultGoodput;
  return goodput.size() == 1 ? goodput[0] : goodput[dim];
}

double NetworkConfig::MessageOverheadNsOf(int dim) const {
  if (message_overhead_ns.empty()) return kDefaultMessageOverheadNs;
  return message_overhead_ns.size() == 1 ? message_overhead_ns[0] : message_overhead_ns[dim];
}

double NetworkConfig::BurstBytesOf(int dim) const {
  if (burst_bytes.empty()) return 0;
  return burst_bytes.size() == 1 ? burst_bytes[0] : burst_bytes[dim];
}

nlohmann::json NetworkConfig::ToJson() const {
  nlohmann::json j;
  j["path"] = path;
  nlohmann::json topo = nlohmann::json::array();
  for (TopologyKind k : topology) topo.push_back(TopologyKindName(k));
  j["topology"] = topo;
  j["npus_count"] = npus_count;
  j["bandwidth"] = bandwidth_gbps;
  j["latency"] = latency_ns;
  // As the flow model uses them (defaults applied), so a result file says what it assumed.
  std::vector<double> g, o;
  for (int d = 0; d < dims(); ++d) {
    g.push_back(GoodputOf(d));
    o.push_back(MessageOverheadNsOf(d));
  }
  j["goodput"] = g;
  j["message_overhead"] = o;
  if (!message_times.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& [bytes, ns] : message_times) t.push_back({bytes, ns});
    j["message_times"] = t;
  }
  if (!burst_bytes.empty()) j["burst"] = burst_bytes;
  if (!burst_message_times.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& [bytes, ns] : burst_message_times) t.push_back({bytes, ns});
    j["burst_message_times"] = t;
  }
  if (loopback_dimension >= 0) j["loopback_dimension"] = loopback_dimension;
  if (machine_gbps > 0) j["machine_bandwidth"] = machine_gbps;
  if (probe_rtt.interval_ns > 0) {
    j["probe_rtt"] = {{"interval", probe_rtt.interval_ns},
                      {"duration", probe_rtt.duration_ns},
                      {"bandwidth", probe_rtt.gbps}};
  }
  if (leaf_spine.present()) {
    j["spines"] = leaf_spine.spines;
    j["spine_bandwidth"] = leaf_spine.bandwidth_gbps;
    j["spine_latency"] = leaf_spine.latency_ns;
    j["ecmp"] = "split";
    if (leaf_spine.oversubscription > 0) j["oversubscription"] = leaf_spine.oversubscription;
    if (leaf_spine.leaf_dimension != 0) j["leaf_dimension"] = leaf_spine.leaf_dimension;
    if (leaf_spine.three_tier()) {
      j["super_spines"] = leaf_spine.super_spines;
      j["super_spine_bandwidth"] = leaf_spine.super_bandwidth_gbps;
      j["super_spine_latency"] = leaf_spine.super_latency_ns;
      if (leaf_spine.spine_oversubscription > 0) {
        j["spine_oversubscription"] = leaf_spine.spine_oversubscription;
      }
    }
    if (!leaf_spine.routes.empty()) {
      nlohmann::json routes = nlohmann::json::array();
      for (const EcmpRoute& r : leaf_spine.routes) routes.push_back({r.src_host, r.dst_host, r.spine});
      j["ecmp_routes"] = routes;
    }
    if (!leaf_spine.connections.empty()) {
      nlohmann::json connections = nlohmann::json::array();
      for (const EcmpConnection& r : leaf_spine.connections) {
        connections.push_back({r.src, r.dst, r.channel, r.spine});
      }
      j["ecmp_connections"] = connections;
    }
  }
  j["total_npus"] = total_npus();
  return j;
}

Status ValidateNetworkConfig(const NetworkConfig& c) {
  const std::string& o = c.path;
  if (c.topology.empty()) {
    return Status::InvalidArgument(Where(o, "topology") + " lists no dimension");
  }
  auto check_len = [&](size_t n, const char* key) -> Status {
    if (n == c.topology.size()) return Status::Ok();
    return Status::InvalidArgument(Where(o, key) + " has " + std::to_string(n) +
                                   " entries but topology has " +
                                   std::to_string(c.topology.size()) +
                                   " dimensions (give one per dimension)");
  };
  GENIE_RETURN_IF_ERROR(check_len(c.npus_count.size(), "npus_count"));
  GENIE_RETURN_IF_ERROR(check_len(c.bandwidth_gbps.size(), "bandwidth"));
  GENIE_RETURN_IF_ERROR(check_len(c.latency_ns.size(), "latency"));
  // The flow model's keys may also give one value for every dimension.
  if (c.goodput.size() > 1) GENIE_RETURN_IF_ERROR(check_len(c.goodput.size(), "goodput"));
  if (c.message_overhead_ns.size() > 1) {
    GENIE_RETURN_IF_ERROR(check_len(c.message_overhead_ns.size(), "message_overhead"));
  }
  for (double g : c.goodput) {
    if (!(g > 0 && g <= 1)) {
      return Status::InvalidArgument(Where(o, "goodput") + ": " + Number(g) +
                                     " is out of range; give the fraction of the link's "
                                     "bandwidth a transfer really gets, above 0 and at most 1 "
                                     "(TCP over Ethernet: about 0.94)");
    }
  }
  for (double v : c.message_overhead_ns) {
    if (!(v >= 0 && v <= kMaxDelayNs)) {
      return Status::InvalidArgument(Where(o, "message_overhead") + ": " + Number(v) +
                                     " is out of range; give ns per message between 0 and " +
                                     Number(kMaxDelayNs) + " (1,000 s)");
    }
  }
  if (c.burst_bytes.size() > 1) GENIE_RETURN_IF_ERROR(check_len(c.burst_bytes.size(), "burst"));
  for (double v : c.burst_bytes) {
    if (!(v >= 0 && v <= 1e12)) {
      return Status::InvalidArgument(Where(o, "burst") + ": " + Number(v) +
                                     " is out of range; give each link's shaper bucket in bytes "
                                     "(a tbf burst), 0 for none");
    }
  }
  auto check_times = [&](const std::vector<std::pair<double, double>>& times,
                         const char* key) -> Status {
    for (size_t i = 0; i < times.size(); ++i) {
      const auto [bytes, ns] = times[i];
      if (!(bytes >= 1 && bytes <= 1e15) || !(ns > 0 && ns <= kMaxDelayNs) ||
          (i > 0 && !(bytes > times[i - 1].first))) {
        return Status::InvalidArgument(
            Where(o, key) + ": entry " + std::to_string(i) + " [" + Number(bytes) + ", " +
            Number(ns) +
            "] is out of range; give [bytes, ns] pairs with sizes increasing, "
            "at least 1 byte, and times above 0 and at most " +
            Number(kMaxDelayNs) + " ns (genie testbed calibrate writes them)");
      }
    }
    return Status::Ok();
  };
  GENIE_RETURN_IF_ERROR(check_times(c.message_times, "message_times"));
  GENIE_RETURN_IF_ERROR(check_times(c.burst_message_times, "burst_message_times"));
  if (c.loopback_dimension != -1 &&
      !(c.loopback_dimension >= 1 && c.loopback_dimension < static_cast<int>(c.topology.size()))) {
    return Status::InvalidArgument(
        Where(o, "loopback_dimension") + ": " + std::to_string(c.loopback_dimension) +
        " is not a dimension above 0 of the " + std::to_string(c.topology.size()) +
        " given; name the per-host dimension (the ranks of one host), or leave it out");
  }
  if (c.loopback_dimension >= 0 && c.leaf_spine.present()) {
    // The fabric's dimensions (the leaves' hosts, the leaves, the pods) are switched links.
    const int first = c.leaf_spine.leaf_dimension;
    const int last = first + (c.leaf_spine.three_tier() ? 2 : 1);
    if (c.loopback_dimension >= first && c.loopback_dimension <= last) {
      return Status::InvalidArgument(
          Where(o, "loopback_dimension") + ": " + std::to_string(c.loopback_dimension) +
          " is a dimension of the leaf-spine fabric (" + std::to_string(first) + " to " +
          std::to_string(last) + "); name the per-host dimension above them");
    }
  }
  if (c.machine_gbps != 0 &&
      !(c.machine_gbps >= kMinBandwidthGbps && c.machine_gbps <= kMaxBandwidthGbps)) {
    return Status::InvalidArgument(Where(o, "machine_bandwidth") + ": " +
                                   Number(c.machine_gbps) +
                                   " is out of range; give GB/s between " +
                                   Number(kMinBandwidthGbps) + " and " +
                                   Number(kMaxBandwidthGbps) + ", or leave it out");
  }
  if (c.probe_rtt.interval_ns != 0 &&
      !(c.probe_rtt.interval_ns > 0 && c.probe_rtt.interval_ns <= kMaxProbeIntervalNs &&
        c.probe_rtt.duration_ns > 0 &&
        c.probe_rtt.duration_ns < c.probe_rtt.interval_ns &&
        c.probe_rtt.gbps >= kMinBandwidthGbps && c.probe_rtt.gbps <= kMaxBandwidthGbps)) {
    return Status::InvalidArgument(
        Where(o, "probe_rtt") +
        ": give interval and duration in ns (0 < duration < interval <= " +
        Number(kMaxProbeIntervalNs) + "; bbr's are 10e9 and 200e6) and bandwidth in GB/s between " +
        Number(kMinBandwidthGbps) + " and " +
        Number(kMaxBandwidthGbps) + ", or leave it out");
  }
  int64_t total = 1;
  for (size_t d = 0; d < c.topology.size(); ++d) {
    std::string dim = " (dimension " + std::to_string(d) + ")";
    if (c.npus_count[d] <= 1) {
      return Status::InvalidArgument(Where(o, "npus_count") + ": " +
                                     std::to_string(c.npus_count[d]) + dim +
                                     " must be larger than 1");
    }
    total *= c.npus_count[d];
    if (total > kMaxNpus) {
      return Status::InvalidArgument(Where(o, "npus_count") + ": more than 2^24 NPUs in total");
    }
    // NaN fails every comparison, so it is refused with the out-of-range values.
    const double bw = c.bandwidth_gbps[d];
    if (!(bw >= kMinBandwidthGbps && bw <= kMaxBandwidthGbps)) {
      return Status::InvalidArgument(Where(o, "bandwidth") + ": " + Number(bw) + dim +
                                     " is out of range; give GB/s per link between " +
                                     Number(kMinBandwidthGbps) + " and " +
                                     Number(kMaxBandwidthGbps));
    }
    const double lat = c.latency_ns[d];
    if (!(lat >= 0 && lat <= kMaxDelayNs)) {
      return Status::InvalidArgument(Where(o, "latency") + ": " + Number(lat) + dim +
                                     " is out of range; give ns per link between 0 and " +
                                     Number(kMaxDelayNs) + " (1,000 s)");
    }
  }
  // After the dimensions' own checks: the fabric's are stated in their terms.
  if (c.leaf_spine.present()) {
    const LeafSpineConfig& ls = c.leaf_spine;
    const int L = ls.leaf_dimension;
    if (L < 0 || L + 1 >= c.dims()) {
      return Status::InvalidArgument(
          Where(o, "leaf_dimension") + ": " + std::to_string(L) + " is out of range; give the "
          "dimension whose Switch blocks are the leaves, 0 to " + std::to_string(c.dims() - 2) +
          " (the leaves' coordinate across the spines is the next one)");
    }
    if (c.topology[L] != TopologyKind::kSwitch || c.topology[L + 1] != TopologyKind::kSwitch) {
      const std::string a = std::to_string(L), b = std::to_string(L + 1);
      return Status::InvalidArgument(
          Where(o, "spines") + ": a leaf-spine fabric needs dimension " + a +
          " (the hosts of a leaf; leaf_dimension) and dimension " + b +
          " (the leaves) to be Switch; make them Switch or drop the spine keys");
    }
    if (L != 0 && (!ls.routes.empty() || !ls.connections.empty())) {
      return Status::InvalidArgument(
          Where(o, "ecmp_routes") + ": pairs of hosts on a known spine are read with "
          "leaf_dimension 0 only (the testbed's layout); drop one of the two");
    }
    if (ls.spines > kMaxSpines) {
      return Status::InvalidArgument(Where(o, "spines") + ": " + std::to_string(ls.spines) +
                                     " is out of range; give 1 to " +
                                     std::to_string(kMaxSpines) + " spines");
    }
    // Before spine_bandwidth's range: a derived one is the ratio's to explain.
    if (ls.oversubscription != 0) {
      const double r = ls.oversubscription;
      if (!(r > 0 && r <= 1e6)) {
        return Status::InvalidArgument(Where(o, "oversubscription") + ": " + Number(r) +
                                       " is out of range; " + kRatioHint);
      }
      // The spine links and ASTRA-sim's per-rank view of dimension 1 (what the aware and
      // unaware models read) must both carry the ratio, or the models would disagree.
      const double uplink = c.npus_count[L] * c.bandwidth_gbps[L] / (r * ls.spines);
      if (!Agrees(ls.bandwidth_gbps, uplink)) {
        return Status::InvalidArgument(
            Where(o, "spine_bandwidth") + ": " + Number(ls.bandwidth_gbps) +
            " GB/s contradicts oversubscription " + Number(r) + ", which gives " +
            std::to_string(c.npus_count[L]) + " hosts x " + Number(c.bandwidth_gbps[L]) +
            " GB/s / (" + Number(r) + " x " + std::to_string(ls.spines) +
            " spines) = " + Number(uplink) + " GB/s per leaf-spine link; drop one of the two");
      }
      const double share = c.bandwidth_gbps[L] / r;
      if (!Agrees(c.bandwidth_gbps[L + 1], share)) {
        return Status::InvalidArgument(
            Where(o, "bandwidth") + ": dimension " + std::to_string(L + 1) + "'s " +
            Number(c.bandwidth_gbps[L + 1]) +
            " GB/s is not a rank's share of its leaf's uplinks at oversubscription " + Number(r) +
            " (bandwidth[" + std::to_string(L) + "] / " + Number(r) + " = " + Number(share) +
            " GB/s), which ASTRA-sim and the aware and unaware models read; give that value");
      }
    }
    if (!(ls.bandwidth_gbps >= kMinBandwidthGbps && ls.bandwidth_gbps <= kMaxBandwidthGbps)) {
      return Status::InvalidArgument(Where(o, "spine_bandwidth") + ": " +
                                     Number(ls.bandwidth_gbps) +
                                     " is out of range; give GB/s per leaf-spine link between " +
                                     Number(kMinBandwidthGbps) + " and " +
                                     Number(kMaxBandwidthGbps));
    }
    if (!(ls.latency_ns >= 0 && ls.latency_ns <= kMaxDelayNs)) {
      return Status::InvalidArgument(Where(o, "spine_latency") + ": " + Number(ls.latency_ns) +
                                     " is out of range; give ns per leaf-spine link between 0 "
                                     "and " + Number(kMaxDelayNs) + " (1,000 s)");
    }
    const int64_t hosts = int64_t{c.npus_count[0]} * c.npus_count[1];
    for (const EcmpRoute& r : ls.routes) {  // npus_count[0] > 1: checked above
      const bool in_range = r.src_host >= 0 && r.src_host < hosts && r.dst_host >= 0 &&
                            r.dst_host < hosts && r.spine >= 0 && r.spine < ls.spines;
      if (!in_range || r.src_host / c.npus_count[0] == r.dst_host / c.npus_count[0]) {
        return Status::InvalidArgument(
            Where(o, "ecmp_routes") + ": [" + std::to_string(r.src_host) + ", " +
            std::to_string(r.dst_host) + ", " + std::to_string(r.spine) +
            "] is not a pair of hosts on different leaves (0 to " + std::to_string(hosts - 1) +
            ", " + std::to_string(c.npus_count[0]) + " per leaf) and a spine (0 to " +
            std::to_string(ls.spines - 1) + ")");
      }
    }
    for (const EcmpConnection& r : ls.connections) {
      const int n = c.total_npus();
      const bool in_range = r.src >= 0 && r.src < n && r.dst >= 0 && r.dst < n &&
                            r.channel >= 0 && r.channel < 65536 && r.spine >= 0 &&
                            r.spine < ls.spines;
      if (!in_range || (r.src % hosts) / c.npus_count[0] == (r.dst % hosts) / c.npus_count[0]) {
        return Status::InvalidArgument(
            Where(o, "ecmp_connections") + ": [" + std::to_string(r.src) + ", " +
            std::to_string(r.dst) + ", " + std::to_string(r.channel) + ", " +
            std::to_string(r.spine) + "] is not a connection between NPUs on different leaves (0 "
            "to " + std::to_string(n - 1) + ", " + std::to_string(c.npus_count[0]) +
            " hosts per leaf), a channel and a spine (0 to " + std::to_string(ls.spines - 1) +
            ")");
      }
    }
    if (ls.super_spines != 0 || ls.spine_oversubscription != 0) {
      GENIE_RETURN_IF_ERROR(ValidateSuperSpines(c));
    }
  } else if (c.leaf_spine.spines < 0) {
    return Status::InvalidArgument(Where(o, "spines") + ": give 1 or more spines");
  } else if (c.leaf_spine.super_spines != 0 || c.leaf_spine.spine_oversubscription != 0) {
    return Status::InvalidArgument(Where(o, "super_spines") +
                                   " describes a third tier but \"spines\" is missing; give "
                                   "spines: S (the spines of each pod)");
  } else if (c.leaf_spine.oversubscription != 0 || c.leaf_spine.leaf_dimension != 0) {
    return Status::InvalidArgument(Where(o, c.leaf_spine.oversubscription != 0
                                                ? "oversubscription"
                                                : "leaf_dimension") +
                                   " describes a leaf-spine fabric but \"spines\" is missing; "
                                   "give spines: S (the number of spines)");
  }
  return Status::Ok();
}

Result<NetworkConfig> ParseNetworkConfig(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(origin + ": not valid YAML: " + e.msg + " (line " +
                                   std::to_string(e.mark.line + 1) + ")");
  }
  if (!root.IsMap()) {
    return Status::InvalidArgument(origin +
                                   ": expected keys topology, npus_count, bandwidth, latency");
  }
  NetworkConfig c;
  c.path = origin;
  std::vector<std::string> names;
  GENIE_RETURN_IF_ERROR(ReadList(root, "topology", origin, &names));
  for (const std::string& n : names) {
    if (n == "Ring") {
      c.topology.push_back(TopologyKind::kRing);
    } else if (n == "FullyConnected") {
      c.topology.push_back(TopologyKind::kFullyConnected);
    } else if (n == "Switch") {
      c.topology.push_back(TopologyKind::kSwitch);
    } else {
      return Status::InvalidArgument(Where(origin, "topology") + ": unknown building block \"" +
                                     n + "\" (use Ring, FullyConnected or Switch)");
    }
  }
  GENIE_RETURN_IF_ERROR(ReadList(root, "npus_count", origin, &c.npus_count));
  GENIE_RETURN_IF_ERROR(ReadList(root, "bandwidth", origin, &c.bandwidth_gbps));
  GENIE_RETURN_IF_ERROR(ReadList(root, "latency", origin, &c.latency_ns));
  if (root["goodput"]) GENIE_RETURN_IF_ERROR(ReadList(root, "goodput", origin, &c.goodput));
  if (root["message_overhead"]) {
    GENIE_RETURN_IF_ERROR(ReadList(root, "message_overhead", origin, &c.message_overhead_ns));
  }
  GENIE_RETURN_IF_ERROR(ReadTimes(root, "message_times", origin, &c.message_times));
  if (root["burst"]) GENIE_RETURN_IF_ERROR(ReadList(root, "burst", origin, &c.burst_bytes));
  GENIE_RETURN_IF_ERROR(ReadTimes(root, "burst_message_times", origin, &c.burst_message_times));
  GENIE_RETURN_IF_ERROR(ParseLeafSpine(root, origin, c, &c.leaf_spine));
  if (root["loopback_dimension"]) {
    GENIE_RETURN_IF_ERROR(ReadScalar(root, "loopback_dimension", origin, &c.loopback_dimension));
  }
  if (root["machine_bandwidth"]) {
    GENIE_RETURN_IF_ERROR(
        ReadScalar(root, "machine_bandwidth", origin, &c.machine_gbps));
  }
  if (root["probe_rtt"]) {
    const YAML::Node p = root["probe_rtt"];
    const std::string where = Where(origin, "probe_rtt");
    if (!p.IsMap()) {
      return Status::InvalidArgument(
          where + ": expected a map like {interval: 10e9, duration: 200e6, bandwidth: 0.015}");
    }
    for (const auto& item : p) {
      const std::string k = item.first.as<std::string>("");
      if (k != "interval" && k != "duration" && k != "bandwidth") {
        return Status::InvalidArgument(where + ": unknown key \"" + k +
                                       "\" (it has interval, duration and bandwidth)");
      }
    }
    for (const char* k : {"interval", "duration", "bandwidth"}) {
      if (!p[k]) return Status::InvalidArgument(where + ": " + k + " is missing");
    }
    GENIE_RETURN_IF_ERROR(ReadScalar(p, "interval", where, &c.probe_rtt.interval_ns));
    GENIE_RETURN_IF_ERROR(ReadScalar(p, "duration", where, &c.probe_rtt.duration_ns));
    GENIE_RETURN_IF_ERROR(ReadScalar(p, "bandwidth", where, &c.probe_rtt.gbps));
  }
  GENIE_RETURN_IF_ERROR(ValidateNetworkConfig(c));
  for (const auto& item : root) {
    const std::string k = item.first.as<std::string>("");
    if (k != "topology" && k != "npus_count" && k != "bandwidth" && k != "latency" &&
        k != "goodput" && k != "message_overhead" && k != "spines" && k != "spine_bandwidth" &&
        k != "spine_latency" && k != "ecmp" && k != "ecmp_routes" && k != "ecmp_connections" &&
        k != "message_times" &&
        k != "burst" && k != "burst_message_times" && k != "oversubscription" &&
        k != "leaf_dimension" && k != "super_spines" && k != "super_spine_bandwidth" &&
        k != "super_spine_latency" && k != "spine_oversubscription" &&
        k != "loopback_dimension" && k != "machine_bandwidth" && k != "probe_rtt") {
      c.ignored_keys.push_back(k);
      spdlog::warn(
          "{}: ignoring unknown network key \"{}\" (genie reads topology, npus_count, "
          "bandwidth, latency, goodput, message_overhead, spines, spine_bandwidth, "
          "spine_latency, ecmp, ecmp_routes, ecmp_connections, oversubscription, leaf_dimension, "
          "super_spines, super_spine_bandwidth, super_spine_latency, spine_oversubscription, "
          "message_times, burst, burst_message_times, loopback_dimension, machine_bandwidth and "
          "probe_rtt)",
          origin, k);
    }
  }
  return c;
}

Result<NetworkConfig> LoadNetworkConfig(const std::string& path) {
  GENIE_ASSIGN_OR_RETURN(std::string text, ReadInputFile(path, "network configuration"));
  return ParseNetworkConfig(text, path);
}

}  // namespace genie::config
