// NetworkConfig: ASTRA-sim's analytical network.yml (`--network-configuration`): one entry per
// topology dimension (dim 0 varies fastest in rank numbering) giving the building block
// (Ring | FullyConnected | Switch), its NPU count, link bandwidth in GB/s (per link, per
// direction; GB = 2^30 bytes as ASTRA-sim computes it) and link latency in ns.
// Two optional keys are genie's own and read only by the flow model (sim/flow_model.h;
// ASTRA-sim ignores keys it does not know): `goodput`, the fraction of a link's bandwidth a
// transport really gets (TCP over Ethernet: headers, framing), and `message_overhead`, the
// software cost in ns a host adds to every message. Either is one value per dimension or a
// single value for all; absent, the documented defaults below apply.
// Four more keys, also genie's own and read only by the flow model, make dimension 1 a
// leaf–spine fabric (docs/simulation.md, "Leaf–spine and ECMP"): `spines` (S), `spine_bandwidth`
// (GB/s per leaf–spine link per direction), `spine_latency` (ns per leaf–spine link) and `ecmp`
// (`split`: the hash is unknown, every message is spread evenly over the S spines), plus
// `ecmp_routes`, the pairs of hosts whose spine is known (a testbed hashing on addresses only:
// `[src_host, dst_host, spine]`, host = rank mod hosts, one entry per direction); a pair listed
// takes that spine alone, the others stay split; `ecmp_connections` ([src, dst, channel, spine],
// NPUs) does the same per connection (ports hashed too). `oversubscription` (R, e.g. 4 for 4:1)
// sizes the leaves' uplinks from the hosts' links instead of spine_bandwidth; `leaf_dimension`
// (L) moves the leaves up a dimension (L = 1: rail-optimized). `super_spines` adds a third tier (pods of
// leaves and spines joined by super-spines; `super_spine_bandwidth` or `spine_oversubscription`,
// `super_spine_latency`). Dimension 0
// is then the hosts of a leaf, dimension 1 the leaves (both Switch); ASTRA-sim (and genie's
// aware and unaware models) keep reading the same file as `[Switch, Switch, ...]`.
// One more of genie's own keys, `message_times` ([[bytes, ns], ...], sizes increasing), is what
// `genie testbed calibrate` measured with every host sending at once: a message of that size
// between two hosts took that long from its send to its delivery, one per link (a ring step).
// The flow model then sizes each message crossing dimension 0 so that, alone on its links, it
// takes the time interpolated log-log from the table (docs/prediction.md).
// Two more, for links behind a token-bucket shaper (a testbed's tbf; a cloud NIC's or a
// policer's allowance): `burst`, each link's bucket in bytes at its wire rate (one value per
// dimension or one for all; 0: none), which fills while the link is idle and lets that many
// bytes out at once; and `burst_message_times` ([[bytes, ns], ...]), what a message of each size
// took with every link's bucket full: the floor no message beats however many bytes its bucket
// lets out (the hosts' software). With a burst, `message_times` is the steady step, measured
// once the buckets were spent.
// Value type, built once at start-up; any thread may read it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"

namespace genie::config {

enum class TopologyKind { kRing, kFullyConnected, kSwitch };
const char* TopologyKindName(TopologyKind kind);  // "Ring", "FullyConnected", "Switch"

// Defaults of the flow model's parameters (docs/simulation.md, "Flow model"): TCP payload per
// Ethernet wire byte at MTU 1500 (1448 / 1538), and a kernel TCP stack's cost per message.
inline constexpr double kDefaultGoodput = 0.94;
inline constexpr double kDefaultMessageOverheadNs = 5000;

// A host's loopback between its ranks (TCP over `lo`, one stream: measured 2.0 GB/s of payload
// on a 2-core VM, 2026-12-07), its latency and goodput: the per-host dimension genie appends for
// ranks sharing hosts.
inline constexpr double kHostLoopbackGbps = 2.0;
inline constexpr double kHostLoopbackLatencyNs = 1000.0;
inline constexpr double kHostLoopbackGoodput = 1.0;  // that rate is payload: no Ethernet framing

// How the flow model spreads a message between leaves over the spines.
enum class EcmpMode { kSplit };  // hash unknown: S equal sub-flows, one per spine

// A pair of hosts whose messages take one known spine (ECMP with a known hash).
struct EcmpRoute {
  int src_host = 0, dst_host = 0;  // rank mod (npus_count[0] x npus_count[1])
  int spine = 0;
  bool operator==(const EcmpRoute&) const = default;
};

// One connection whose messages take one known spine (ECMP hashing ports too, a testbed's
// --hash l4, asked per connection once its ports are known): the messages from NPU `src` to
// NPU `dst` on `channel` (the flow model's connection) take `spine`; before `ecmp_routes`.
struct EcmpConnection {
  int src = 0, dst = 0;  // NPUs (ranks)
  int channel = 0;
  int spine = 0;
  bool operator==(const EcmpConnection&) const = default;
};

// Dimension 1 as a leaf–spine fabric (flow model only); spines == 0: absent.
struct LeafSpineConfig {
  int spines = 0;
  double bandwidth_gbps = 0;  // per leaf–spine link, per direction
  double latency_ns = 0;      // per leaf–spine link
  EcmpMode ecmp = EcmpMode::kSplit;
  std::vector<EcmpRoute> routes = {};  // pairs on a known spine; the others are split
  std::vector<EcmpConnection> connections = {};  // network.yml `ecmp_connections`
  // network.yml `oversubscription` R (0: not given): a leaf's host-facing capacity
  // (npus_count[0] x bandwidth[0]) over its uplink capacity (spines x bandwidth_gbps). Given,
  // the parser derives bandwidth_gbps when spine_bandwidth is absent, and validation requires
  // both the spine links and dimension 1's per-rank share (bandwidth[1], ASTRA-sim's view) to
  // agree with it.
  double oversubscription = 0;
  // network.yml `leaf_dimension` L: the dimension whose Switch blocks are the leaves (their
  // hosts), L + 1 (Switch) the leaves' coordinate across the spines. 0: dimension 0 the hosts
  // of a leaf, as the testbed writes it. 1 over [NVLink, rail, pod]: rail-optimized, a leaf
  // per GPU index and pod, crossed after NVLink.
  int leaf_dimension = 0;
  // A third tier (network.yml `super_spines` K; 0: two tiers). Dimension L + 2 (Switch) is then
  // the pods: `spines` S are per pod, each leaf has one uplink to each spine of its pod, and the
  // K super-spines (the core) form S planes of K / S: spine s of every pod has one link to each
  // super-spine of plane s (super-spines s K/S .. (s + 1) K/S - 1), as a k-ary fat-tree's
  // aggregation switches reach their core group. Dimensions above L + 2 are ranks of one host.
  int super_spines = 0;
  double super_bandwidth_gbps = 0;  // per spine–super-spine link, per direction
  double super_latency_ns = 0;      // per spine–super-spine link
  // network.yml `spine_oversubscription` R2 (0: not given): a spine's leaf-facing capacity
  // (leaves per pod x spine_bandwidth) over its uplink capacity (K / S x super_spine_bandwidth).
  // Given, the parser derives super_bandwidth_gbps when super_spine_bandwidth is absent, and
  // validation requires both it and dimension L + 2's per-rank share (bandwidth[L + 1] / R2,
  // ASTRA-sim's view) to agree.
  double spine_oversubscription = 0;
  bool present() const { return spines > 0; }
  bool three_tier() const { return spines > 0 && super_spines > 0; }
};

struct NetworkConfig {
  std::string path;  // where it was read from ("" when built in code)
  std::vector<TopologyKind> topology;
  std::vector<int> npus_count;
  std::vector<double> bandwidth_gbps;
  std::vector<double> latency_ns;
  // Flow model only; empty = default, one entry = every dimension, else one per dimension.
  std::vector<double> goodput = {};
  std::vector<double> message_overhead_ns = {};
  // Flow model only: measured time of one message per size (bytes, ns), sizes increasing;
  // empty: none (bytes / (bandwidth x goodput) + overhead + latency alone).
  std::vector<std::pair<double, double>> message_times = {};
  // Flow model only: each link's shaper bucket, bytes at its wire rate; empty or 0: none.
  std::vector<double> burst_bytes = {};
  // Flow model only: the time of one message per size with its links' buckets full (bytes,
  // ns), sizes increasing; empty: none (a burst then costs no time but the path's).
  std::vector<std::pair<double, double>> burst_message_times = {};
  // Flow model only: dimension 1's Switch as leaves joined by spines.
  LeafSpineConfig leaf_spine = {};
  // Flow model only: network.yml `loopback_dimension` (-1: none), each host's loopback between
  // its ranks (no shaper: a path across hosts is shaped by the hosts' links alone), and
  // `machine_bandwidth` (GB/s of loopback TCP; 0: none), what one machine's cores move in all:
  // a testbed's hosts are namespaces of one machine, which copies every byte any of them sends.
  int loopback_dimension = -1;
  double machine_gbps = 0;
  // Flow model only: network.yml `probe_rtt: {interval: ns, duration: ns, bandwidth: GB/s}`,
  // the hosts' TCP is bbr, whose every connection moves at most `bandwidth` for `duration`
  // each `interval` (its PROBE_RTT, sim/flow_model.h); interval 0: none.
  struct ProbeRtt {
    double interval_ns = 0;
    double duration_ns = 0;
    double gbps = 0;
  } probe_rtt = {};
  // Keys the file set that genie does not read (logged when parsed).
  std::vector<std::string> ignored_keys = {};

  // The flow model's values for dimension `dim`, defaults applied.
  double GoodputOf(int dim) const;
  double MessageOverheadNsOf(int dim) const;
  double BurstBytesOf(int dim) const;
  int dims() const { return static_cast<int>(topology.size()); }
  int total_npus() const;  // product of npus_count
  nlohmann::json ToJson() const;
};

// Reads and validates a network.yml. Errors name the file and the key and say what to fix.
Result<NetworkConfig> LoadNetworkConfig(const std::string& path);
// Same, from YAML text; `origin` names the source in errors.
Result<NetworkConfig> ParseNetworkConfig(const std::string& text, const std::string& origin);
// Checks list lengths and value ranges (also for configs built in code).
Status ValidateNetworkConfig(const NetworkConfig& config);

}  // namespace genie::config
