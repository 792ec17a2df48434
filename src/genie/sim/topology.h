// Topology: the physical network a network.yml describes, as ASTRA-sim's analytical backend
// builds it. Ranks have mixed-radix addresses over the dimensions (dim 0 varies fastest:
// rank = a0 + n0*(a1 + n1*(a2 + ...))). Within one dimension, each group of ranks that differ
// only in that coordinate forms one building block:
//   Ring            bidirectional; a message takes the shorter direction (clockwise on a tie);
//                   links i->i+1 and i->i-1
//   FullyConnected  one link per ordered pair; 1 hop
//   Switch          one switch device per group; links npu->switch and switch->npu; 2 hops
// Links are unidirectional and numbered densely [0, num_links()) so models can keep per-link
// state in flat arrays; devices are the NPUs [0, npus()) then the switches.
// With a leaf-spine fabric (network.yml `spines`, read by the flow model only), dimension L's
// (`leaf_dimension`, default 0) switches are the leaves (the hosts of a leaf), dimension L + 1
// the leaves' coordinate across the spines, and after every dimension's links come, per leaf l
// and spine s, the links leaf l -> spine s and spine s -> leaf l; the spines are the last
// devices. With L = 1 over [NVLink, rail, pod] the fabric is rail-optimized: one leaf per GPU
// index (dimension 0's coordinate) and pod (dimension 2's). With a third tier (network.yml
// `super_spines` K), dimension L + 2 is the pods: the S spines are per pod (spine s of pod p is
// spine p S + s), leaves are per pod too, and after the leaf-spine links come, per pod p, spine s
// and super-spine k of plane s (K / S per plane, k = s K/S + j), the links spine -> super-spine
// and super-spine -> spine; the super-spines are the last devices. Route() ignores the fabric
// (ASTRA-sim's route, for the aware and unaware models); FlowRoute() takes it.
// Immutable after Create(); any thread may read it.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/config/network_config.h"

namespace genie::sim {

class Topology {
 public:
  struct LinkInfo {
    int dim = 0;
    int from_device = 0;
    int to_device = 0;
  };

  static Result<Topology> Create(const config::NetworkConfig& config);

  int npus() const { return npus_; }
  int dims() const { return static_cast<int>(dims_.size()); }
  config::TopologyKind kind(int dim) const { return dims_[dim].kind; }
  int size(int dim) const { return dims_[dim].size; }
  double latency_ns(int dim) const { return dims_[dim].latency_ns; }
  double bandwidth_gbps(int dim) const { return dims_[dim].bandwidth_gbps; }
  // Bytes per ns as ASTRA-sim converts it: GB/s * 2^30 / 1e9.
  double bytes_per_ns(int dim) const { return dims_[dim].bytes_per_ns; }
  // The flow model's parameters (network.yml's `goodput`, `message_overhead`, defaults applied).
  double goodput(int dim) const { return dims_[dim].goodput; }
  double message_overhead_ns(int dim) const { return dims_[dim].message_overhead_ns; }

  int Coordinate(int rank, int dim) const {
    // Without a division where none is needed (the lowest dimension's stride is 1; the highest
    // one's quotient is below its size): routes ask this per message and hop.
    const Dim& d = dims_[dim];
    const int above = d.stride == 1 ? rank : rank / d.stride;
    return d.groups == d.stride ? above : above % d.size;
  }
  std::vector<int> Address(int rank) const;
  int RankOf(const std::vector<int>& address) const;
  // The first (lowest) dimension where the two ranks' addresses differ; -1 when equal.
  int FirstDifferingDim(int a, int b) const;
  // Hops between two coordinates of one building block of `dim`.
  int Hops(int dim, int from, int to) const;

  // Congestion-unaware delay of one message (ASTRA-sim's formula and rounding):
  // floor(hops * latency + bytes / bw) on the first differing dimension; 0 when src == dst.
  // kMaxTimeNs when the delay does not fit in TimeNs (OverflowError says why).
  TimeNs UnawareDelay(int src, int dst, Bytes bytes) const;
  // The error for a message whose delay overflows simulated time: names the message, the
  // dimension, and the network.yml keys and values that produce it.
  Status OverflowError(int src, int dst, Bytes bytes, int dim) const;

  int num_links() const { return num_links_; }
  int num_devices() const { return num_devices_; }
  LinkInfo link(int id) const;
  // link(id).dim without the devices (their divisions): the aware model asks at every hop.
  int link_dim(int id) const {
    if (IsSpineLink(id)) return IsSuperLink(id) ? leaf_dim_ + 2 : leaf_dim_ + 1;
    int dim = dims() - 1;
    while (dims_[dim].link_offset > id) --dim;
    return dim;
  }
  std::string DeviceName(int device) const;  // "npu 3" or "switch 2 (dim 0)"
  std::string LinkName(int id) const;        // "dim 0: npu 3 -> switch 8 (dim 0)"
  // Replaces `links` with the links a message from src to dst crosses in order, routing
  // dimension by dimension from dim 0 up (ASTRA-sim's multi-dimensional route).
  void Route(int src, int dst, std::vector<int>* links) const;
  // Every link a route (Route, FlowRoute) returns is replaced by fold[link]: under symmetry
  // reduction (sim/symmetry.h) its orbit's representative; with host slots (sim/host_slots.h)
  // the host's own link. Empty (the default): none.
  // With `copies` (symmetry), a fabric link (leaf-spine, spine-super-spine) may stand for
  // several of its orbit's copies at once (a group element that fixes its leaf or pod):
  // link_copies(rep) of them, the group's order over its orbit's size (an NPU's links' orbits
  // are as large as the group: the group acts freely on ranks). The flow model shares the
  // link's capacity / copies among its flows. Without (host slots), every link is one link.
  void set_link_fold(std::vector<int> fold, bool copies = true);
  int link_copies(int id) const { return link_copies_.empty() ? 1 : link_copies_[id]; }

  // The physical network the flow model routes over. Without a leaf-spine fabric it is
  // Route()'s, one path. With one, a message between ranks of different leaves' coordinates
  // (dimension L + 1) takes one of FlowPaths() == spines equal paths: the dimensions below L
  // as Route() goes them (L = 1: NVLink to the GPU on dst's rail), then that rank's link into
  // its leaf, leaf -> spine `path`,
  // spine -> the destination's leaf, that leaf's link to the host of dst, then (ranks of one
  // host) the higher dimensions as Route() goes; within a leaf it is Route()'s path (the
  // uplinks are never touched). A pair of hosts listed in network.yml's `ecmp_routes` (the
  // testbed's known hash) has one path, on its spine; FlowRoute(..., 0) takes it. So has a
  // connection (src, dst, channel) listed in `ecmp_connections` (ports hashed too, each
  // connection asked), whatever its pair's; `channel` -1: the pair's.
  // With a third tier, a message between pods takes one of FlowPaths() == K equal paths, path
  // q through super-spine q: host -> leaf -> spine q / (K/S) of its pod -> super-spine q -> that
  // spine index in the destination's pod -> leaf -> host (6 fabric links).
  bool leaf_spine() const { return spines_ > 0; }
  bool three_tier() const { return super_spines_ > 0; }
  int spines() const { return spines_; }  // per pod with a third tier
  int super_spines() const { return super_spines_; }
  int pods() const { return pods_; }
  bool has_ecmp_routes() const { return !pinned_spine_.empty() || !connection_spine_.empty(); }
  int FlowPaths(int src, int dst, int channel = -1) const;
  // Fabric links: leaf-spine and (a third tier) spine-super-spine.
  bool IsSpineLink(int id) const { return spines_ > 0 && id >= spine_link_offset_; }
  bool IsSuperLink(int id) const { return super_spines_ > 0 && id >= super_link_offset_; }
  // For the symmetry reduction: the leaf (or, for a spine-super-spine link, the pod) whose
  // fabric link `id` is, an NPU on it, and the same link of another leaf (pod) `to`.
  int Leaf(int npu) const {
    const int low = leaf_dim_ == 0 ? 0 : npu % dims_[leaf_dim_].stride;
    int across = Coordinate(npu, leaf_dim_ + 1);
    if (super_spines_ > 0) across += dims_[leaf_dim_ + 1].size * Coordinate(npu, leaf_dim_ + 2);
    return low + dims_[leaf_dim_].stride * across;
  }
  int Pod(int npu) const { return super_spines_ > 0 ? Coordinate(npu, leaf_dim_ + 2) : 0; }
  int FabricLinkOwner(int id) const;  // its leaf, or its pod
  int FabricOwnerNpu(int id) const;   // an NPU of that leaf or pod
  int MoveFabricLink(int id, int to) const;
  // The links between the leaf of `npu` and every spine, both directions (none without a
  // leaf-spine fabric).
  void LeafSpineLinks(int npu, std::vector<int>* links) const;
  void FlowRoute(int src, int dst, int path, std::vector<int>* links, int channel = -1) const;
  // A link's bytes/ns (ASTRA-sim's conversion), latency, and the flow model's goodput and
  // message overhead: its dimension's, or for a leaf-spine link spine_bandwidth /
  // spine_latency with dimension L + 1's (the leaves') goodput and overhead.
  double link_bytes_per_ns(int id) const;
  double link_latency_ns(int id) const;
  double link_goodput(int id) const { return dims_[link(id).dim].goodput; }
  // network.yml `burst`: link `id`'s shaper bucket in bytes at its wire rate (a spine link:
  // dimension L + 1's), 0 none.
  double link_burst_bytes(int id) const { return dims_[link(id).dim].burst_bytes; }
  // network.yml `burst_message_times`: the least time a message of `bytes` takes from send to
  // delivery when its links' buckets let all of it out at once (the hosts' software),
  // interpolated log-log between sizes, below the smallest size its time, above the largest
  // size in proportion; 0 without a table.
  bool has_burst_message_times() const { return !burst_message_times_.empty(); }
  double BurstFloorNs(Bytes bytes) const;
  // network.yml `message_times` (measured with every host sending, one message per link):
  // whether a table was given, whether link `id` is one it applies to (dimension 0's, the
  // hosts' links it was measured on), and what a message of `bytes` costs so that alone on a
  // dimension-0 path (two links at dimension 0's bandwidth x goodput, its latency twice and
  // its overhead) it takes the table's time T, interpolated log-log between sizes (below the
  // smallest size linearly towards the fixed cost, above the largest at its bytes per ns).
  // Beyond the fixed cost, T is either shorter than the bytes take at the link's rate (a
  // shaper's burst let them out faster): the message occupies its links with fewer bytes,
  // `wire_bytes`; or longer (software on busy CPUs): its bytes as they are, plus `extra_ns`
  // of delay that occupies no link, so a slower link further on does not stretch it.
  // {bytes, 0} without a table.
  struct MessageCost {
    double wire_bytes = 0;
    double extra_ns = 0;
  };
  bool has_message_times() const { return !message_times_.empty(); }
  bool MessageTimesApply(int id) const { return !IsSpineLink(id) && link(id).dim == 0; }
  MessageCost MeasuredCost(Bytes bytes) const;
  double link_message_overhead_ns(int id) const {
    return dims_[link(id).dim].message_overhead_ns;
  }

 private:
  struct Dim {
    config::TopologyKind kind;
    int size = 0;
    int stride = 1;       // product of the sizes of lower dimensions
    int groups = 0;       // building blocks in this dimension = npus / size
    int links_per_group = 0;
    int link_offset = 0;  // first link id of this dimension
    int switch_offset = 0;  // first switch device id of this dimension (Switch only)
    double latency_ns = 0;
    double bandwidth_gbps = 0;
    double bytes_per_ns = 0;
    double goodput = 1;
    double message_overhead_ns = 0;
    double burst_bytes = 0;
  };
  int Group(int rank, int dim) const;
  int MemberOf(int group, int dim, int coord) const;  // rank of `coord` in building block
  // Appends the links from `cur` to `dst` over dimensions [first_dim, end_dim) (ASTRA-sim's
  // order); returns the rank reached.
  int RouteFrom(int cur, int dst, int first_dim, int end_dim, std::vector<int>* links) const;
  // (Leaf(npu), public above: its coordinates below the leaf dimension, on the leaves'
  // dimension leaf_dim_ + 1 and, with a third tier, on the pods' leaf_dim_ + 2.)
  // Leaf `leaf`'s link to spine `spine` (of its pod), and that spine's link down to the leaf.
  int Uplink(int leaf, int spine) const {
    return spine_link_offset_ + 2 * (leaf * spines_ + spine);
  }
  int Downlink(int leaf, int spine) const { return Uplink(leaf, spine) + 1; }
  // Pod `pod`'s spine `spine`'s link to super-spine `k` (of the spine's plane), and back.
  int SuperUplink(int pod, int spine, int k) const {
    const int per_plane = super_spines_ / spines_;
    return super_link_offset_ + 2 * ((pod * spines_ + spine) * per_plane + k % per_plane);
  }
  int SuperDownlink(int pod, int spine, int k) const { return SuperUplink(pod, spine, k) + 1; }
  bool CrossesSpines(int src, int dst) const {
    return spines_ > 0 && (Coordinate(src, leaf_dim_ + 1) != Coordinate(dst, leaf_dim_ + 1) ||
                           CrossesPods(src, dst));
  }
  bool CrossesPods(int src, int dst) const {
    return super_spines_ > 0 && Coordinate(src, leaf_dim_ + 2) != Coordinate(dst, leaf_dim_ + 2);
  }

  std::vector<Dim> dims_;
  std::vector<int> link_fold_;
  std::vector<int> link_copies_;  // empty: every link 1
  std::string path_;  // the network.yml, for errors
  int npus_ = 0;
  int num_links_ = 0;
  int num_devices_ = 0;
  // Leaf-spine fabric (0 spines: none).
  int spines_ = 0;
  int leaf_dim_ = 0;             // network.yml leaf_dimension: the hosts of a leaf
  int leaves_ = 0;
  int spine_link_offset_ = 0;    // leaf l -> spine s is +2(l*spines+s), spine s -> leaf l +1
  int spine_device_offset_ = 0;  // spine s (of pod p: p S + s) is device +s
  double spine_latency_ns_ = 0;
  double spine_bytes_per_ns_ = 0;
  // Third tier (0 super-spines: none).
  int super_spines_ = 0;
  int pods_ = 1;
  int super_link_offset_ = 0;  // see SuperUplink()
  int super_device_offset_ = 0;
  double super_latency_ns_ = 0;
  double super_bytes_per_ns_ = 0;
  // ecmp_routes: [src_host * hosts + dst_host] = its spine, -1 unknown (split); empty: none.
  int fabric_hosts_ = 0;
  std::vector<int16_t> pinned_spine_;
  // ecmp_connections: by ConnectionKey(src, dst, channel), its spine.
  std::unordered_map<uint64_t, int16_t> connection_spine_;
  uint64_t ConnectionKey(int src, int dst, int channel) const {
    return ((static_cast<uint64_t>(src) * static_cast<uint64_t>(npus_) +
             static_cast<uint64_t>(dst))
            << 16) |
           static_cast<uint64_t>(channel & 0xffff);
  }
  // message_times as (log bytes, log ns), and the fixed cost of a dimension-0 path.
  std::vector<std::pair<double, double>> message_times_;
  std::vector<std::pair<double, double>> burst_message_times_;  // (log bytes, log ns)
  double path0_fixed_ns_ = 0;
  int PinnedSpine(int src, int dst, int channel = -1) const {
    if (channel >= 0 && !connection_spine_.empty()) {
      auto it = connection_spine_.find(ConnectionKey(src, dst, channel));
      if (it != connection_spine_.end()) return it->second;
    }
    if (pinned_spine_.empty()) return -1;
    return pinned_spine_[static_cast<size_t>(src % fabric_hosts_) * fabric_hosts_ +
                         dst % fabric_hosts_];
  }
};

}  // namespace genie::sim
