#include "genie/sim/topology.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::sim {

using config::TopologyKind;

Result<Topology> Topology::Create(const config::NetworkConfig& config) {
  GENIE_RETURN_IF_ERROR(config::ValidateNetworkConfig(config));
  Topology t;
  t.path_ = config.path;
  t.npus_ = config.total_npus();
  int stride = 1;
  int64_t links = 0;
  int switches = 0;
  for (int d = 0; d < config.dims(); ++d) {
    Dim dim;
    dim.kind = config.topology[d];
    dim.size = config.npus_count[d];
    dim.stride = stride;
    dim.groups = t.npus_ / dim.size;
    // In 64 bits: a fully connected block of n NPUs has n(n-1) links, past int for n > 46341.
    const int64_t n = dim.size;
    int64_t per_group = 0;
    switch (dim.kind) {
      // A 2-ring has one link per direction (ASTRA-sim connects the pair once each way).
      case TopologyKind::kRing: per_group = n == 2 ? 2 : 2 * n; break;
      case TopologyKind::kFullyConnected: per_group = n * (n - 1); break;
      case TopologyKind::kSwitch: per_group = 2 * n; break;
    }
    dim.link_offset = static_cast<int>(links);
    if (per_group <= (int64_t{1} << 30)) links += int64_t{dim.groups} * per_group;
    if (per_group > (int64_t{1} << 30) || links > (int64_t{1} << 30)) {
      return Status::InvalidArgument(config.path + ": the topology has more than 2^30 links");
    }
    dim.links_per_group = static_cast<int>(per_group);
    dim.switch_offset = t.npus_ + switches;
    if (dim.kind == TopologyKind::kSwitch) switches += dim.groups;
    dim.latency_ns = config.latency_ns[d];
    dim.bandwidth_gbps = config.bandwidth_gbps[d];
    // Same expression (and so the same double) as ASTRA-sim's bw_GBps_to_Bpns.
    dim.bytes_per_ns = dim.bandwidth_gbps * (1 << 30) / (1'000'000'000);
    dim.goodput = config.GoodputOf(d);
    dim.message_overhead_ns = config.MessageOverheadNsOf(d);
    dim.burst_bytes = config.BurstBytesOf(d);
    t.dims_.push_back(dim);
    stride *= dim.size;
  }
  if (config.leaf_spine.present()) {
    const config::LeafSpineConfig& ls = config.leaf_spine;
    t.spines_ = ls.spines;
    t.leaf_dim_ = ls.leaf_dimension;
    t.spine_link_offset_ = static_cast<int>(links);
    // One leaf per building block of the leaf dimension among the ranks whose higher
    // coordinates (above the leaves' dimension) are 0: stride x npus_count[L + 1].
    // With a third tier, leaves (and spines) per pod, pods on dimension L + 2.
    t.pods_ = ls.three_tier() ? config.npus_count[t.leaf_dim_ + 2] : 1;
    t.leaves_ = t.dims_[t.leaf_dim_].stride * config.npus_count[t.leaf_dim_ + 1] * t.pods_;
    links += 2 * int64_t{t.leaves_} * ls.spines;
    if (ls.three_tier()) {
      t.super_spines_ = ls.super_spines;
      t.super_link_offset_ = static_cast<int>(std::min<int64_t>(links, int64_t{1} << 30));
      links += 2 * int64_t{t.pods_} * ls.super_spines;  // pods x S spines x K/S each
      t.super_latency_ns_ = ls.super_latency_ns;
      t.super_bytes_per_ns_ = ls.super_bandwidth_gbps * (1 << 30) / (1'000'000'000);
    }
    if (links > (int64_t{1} << 30)) {
      return Status::InvalidArgument(config.path + ": the topology has more than 2^30 links");
    }
    t.spine_device_offset_ = t.npus_ + switches;
    t.super_device_offset_ = t.spine_device_offset_ + t.pods_ * ls.spines;
    t.spine_latency_ns_ = ls.latency_ns;
    t.spine_bytes_per_ns_ = ls.bandwidth_gbps * (1 << 30) / (1'000'000'000);
    if (!ls.routes.empty()) {
      t.fabric_hosts_ = config.npus_count[0] * config.npus_count[1];
      if (int64_t{t.fabric_hosts_} * t.fabric_hosts_ > (int64_t{1} << 28)) {
        return Status::InvalidArgument(config.path + ": ecmp_routes on more than 16,384 hosts");
      }
      t.pinned_spine_.assign(static_cast<size_t>(t.fabric_hosts_) * t.fabric_hosts_, -1);
      for (const config::EcmpRoute& r : ls.routes) {
        t.pinned_spine_[static_cast<size_t>(r.src_host) * t.fabric_hosts_ + r.dst_host] =
            static_cast<int16_t>(r.spine);
      }
    }
    for (const config::EcmpConnection& r : ls.connections) {
      t.connection_spine_[t.ConnectionKey(r.src, r.dst, r.channel)] = static_cast<int16_t>(r.spine);
    }
  }
  t.num_links_ = static_cast<int>(links);
  t.num_devices_ = t.npus_ + switches + t.pods_ * t.spines_ + t.super_spines_;
  for (const auto& [bytes, ns] : config.message_times) {
    t.message_times_.emplace_back(std::log(bytes), std::log(ns));
  }
  for (const auto& [bytes, ns] : config.burst_message_times) {
    t.burst_message_times_.emplace_back(std::log(bytes), std::log(ns));
  }
  if (!t.dims_.empty()) {
    t.path0_fixed_ns_ = 2 * t.dims_[0].latency_ns + t.dims_[0].message_overhead_ns;
  }
  return t;
}

namespace {
// A table of (log bytes, log ns), sizes increasing: log ns at log size `x`, strictly between
// the first and the last size, interpolated linearly.
double LogLogBetween(const std::vector<std::pair<double, double>>& m, double x) {
  size_t i = 1;
  while (m[i].first < x) ++i;
  const double f = (x - m[i - 1].first) / (m[i].first - m[i - 1].first);
  return m[i - 1].second + f * (m[i].second - m[i - 1].second);
}
}  // namespace

Topology::MessageCost Topology::MeasuredCost(Bytes bytes) const {
  const double b = static_cast<double>(bytes);
  if (message_times_.empty() || bytes == 0) return {b, 0};
  const double rate = dims_[0].bytes_per_ns * dims_[0].goodput;
  const auto& m = message_times_;
  const double x = std::log(b);
  // The measured time beyond the path's fixed cost (never below a hundredth of the time: a
  // table measured with less fixed cost than the description's).
  auto beyond = [&](double log_ns) {
    const double ns = std::exp(log_ns);
    return std::max(ns - path0_fixed_ns_, ns / 100);
  };
  double t = 0;
  if (x <= m.front().first) {
    t = beyond(m.front().second) * b / std::exp(m.front().first);
  } else if (x >= m.back().first) {
    t = beyond(m.back().second) * b / std::exp(m.back().first);
  } else {
    t = beyond(LogLogBetween(m, x));
  }
  const double line = b / rate;
  if (t < line) return {t * rate, 0};
  return {b, t - line};
}

double Topology::BurstFloorNs(Bytes bytes) const {
  const auto& m = burst_message_times_;
  if (m.empty() || bytes == 0) return 0;
  const double x = std::log(static_cast<double>(bytes));
  if (x <= m.front().first) return std::exp(m.front().second);
  if (x >= m.back().first) return std::exp(m.back().second + x - m.back().first);
  return std::exp(LogLogBetween(m, x));
}

std::vector<int> Topology::Address(int rank) const {
  std::vector<int> a(dims_.size());
  for (int d = 0; d < dims(); ++d) a[d] = Coordinate(rank, d);
  return a;
}

int Topology::RankOf(const std::vector<int>& address) const {
  GENIE_CHECK_EQ(address.size(), dims_.size());
  int rank = 0;
  for (int d = dims() - 1; d >= 0; --d) rank = rank * dims_[d].size + address[d];
  return rank;
}

int Topology::FirstDifferingDim(int a, int b) const {
  for (int d = 0; d < dims(); ++d) {
    if (Coordinate(a, d) != Coordinate(b, d)) return d;
  }
  return -1;
}

int Topology::Hops(int dim, int from, int to) const {
  if (from == to) return 0;
  const Dim& d = dims_[dim];
  switch (d.kind) {
    case TopologyKind::kRing: {
      int cw = (to - from + d.size) % d.size;
      return std::min(cw, d.size - cw);
    }
    case TopologyKind::kFullyConnected: return 1;
    case TopologyKind::kSwitch: return 2;
  }
  return 0;
}

TimeNs Topology::UnawareDelay(int src, int dst, Bytes bytes) const {
  int d = FirstDifferingDim(src, dst);
  if (d < 0) return 0;
  int hops = Hops(d, Coordinate(src, d), Coordinate(dst, d));
  // ASTRA-sim: (EventTime)(hops * latency + (double)size / bw_Bpns), truncated once.
  auto link_delay = hops * dims_[d].latency_ns;
  auto serialization = static_cast<double>(bytes) / dims_[d].bytes_per_ns;
  return SaturatingTimeNs(link_delay + serialization);
}

Status Topology::OverflowError(int src, int dst, Bytes bytes, int dim) const {
  const Dim& d = dims_[dim];
  char values[128];
  std::snprintf(values, sizeof values, "bandwidth %g GB/s, latency %g ns", d.bandwidth_gbps,
                d.latency_ns);
  return Status::InvalidArgument(
      "simulated time overflows: a " + std::to_string(bytes) + "-byte message from npu " +
      std::to_string(src) + " to npu " + std::to_string(dst) + " on dimension " +
      std::to_string(dim) + " would arrive past 2^63-1 ns (about 292 years) with " +
      (path_.empty() ? std::string("the network's") : path_ + "'s") + " keys \"bandwidth\" and " +
      "\"latency\" for dimension " + std::to_string(dim) + " (" + values +
      "); raise the bandwidth, lower the latency or shrink the message");
}

int Topology::Group(int rank, int dim) const {
  const Dim& d = dims_[dim];
  const int low = d.stride == 1 ? 0 : rank % d.stride;  // no division where none is needed
  const int high = d.groups == d.stride ? 0 : rank / (d.stride * d.size);
  return low + high * d.stride;
}

int Topology::MemberOf(int group, int dim, int coord) const {
  const Dim& d = dims_[dim];
  int low = group % d.stride;
  int high = group / d.stride;
  return low + coord * d.stride + high * d.stride * d.size;
}

Topology::LinkInfo Topology::link(int id) const {
  GENIE_CHECK(id >= 0 && id < num_links_) << "link id " << id;
  if (IsSuperLink(id)) {
    const int rel = id - super_link_offset_;
    const int per_plane = super_spines_ / spines_;
    const int spine = rel / 2 / per_plane;  // p S + s
    const int super = spine % spines_ * per_plane + rel / 2 % per_plane;
    const int spine_device = spine_device_offset_ + spine;
    const int super_device = super_device_offset_ + super;
    const bool up = rel % 2 == 0;
    return LinkInfo{leaf_dim_ + 2, up ? spine_device : super_device,
                    up ? super_device : spine_device};
  }
  if (IsSpineLink(id)) {
    const int rel = id - spine_link_offset_;
    const int leaf = rel / 2 / spines_, spine = rel / 2 % spines_;
    // The leaf is the leaf dimension's switch of the leaf's first building block (its ranks
    // whose coordinates above the leaves' dimension, or the pods', are 0), whose number is the
    // leaf's.
    const int leaf_device = dims_[leaf_dim_].switch_offset + leaf;
    const int pod = leaf / (leaves_ / pods_);
    const int spine_device = spine_device_offset_ + pod * spines_ + spine;
    const bool up = rel % 2 == 0;
    return LinkInfo{leaf_dim_ + 1, up ? leaf_device : spine_device,
                    up ? spine_device : leaf_device};
  }
  int dim = dims() - 1;
  while (dims_[dim].link_offset > id) --dim;
  const Dim& d = dims_[dim];
  int rel = id - d.link_offset;
  int group = rel / d.links_per_group;
  int slot = rel % d.links_per_group;
  LinkInfo info;
  info.dim = dim;
  switch (d.kind) {
    case TopologyKind::kRing: {
      bool cw = slot < d.size;
      int from = cw ? slot : slot - d.size;
      int to = cw ? (from + 1) % d.size : (from - 1 + d.size) % d.size;
      info.from_device = MemberOf(group, dim, from);
      info.to_device = MemberOf(group, dim, to);
      break;
    }
    case TopologyKind::kFullyConnected: {
      int from = slot / (d.size - 1);
      int to = slot % (d.size - 1);
      if (to >= from) ++to;
      info.from_device = MemberOf(group, dim, from);
      info.to_device = MemberOf(group, dim, to);
      break;
    }
    case TopologyKind::kSwitch: {
      int sw = d.switch_offset + group;
      if (slot < d.size) {
        info.from_device = MemberOf(group, dim, slot);
        info.to_device = sw;
      } else {
        info.from_device = sw;
        info.to_device = MemberOf(group, dim, slot - d.size);
      }
      break;
    }
  }
  return info;
}

std::string Topology::DeviceName(int device) const {
  if (device < npus_) return "npu " + std::to_string(device);
  if (super_spines_ > 0 && device >= super_device_offset_) {
    return "super-spine " + std::to_string(device - super_device_offset_);
  }
  if (spines_ > 0 && device >= spine_device_offset_) {
    const int spine = device - spine_device_offset_;
    return "spine " + std::to_string(spine) +
           (super_spines_ > 0 ? " (pod " + std::to_string(spine / spines_) + ")" : "");
  }
  int dim = dims() - 1;
  while (dims_[dim].kind != TopologyKind::kSwitch || dims_[dim].switch_offset > device) --dim;
  return "switch " + std::to_string(device) + " (dim " + std::to_string(dim) + ")";
}

std::string Topology::LinkName(int id) const {
  if (IsSuperLink(id)) {
    const LinkInfo l = link(id);
    return "super-spines: " + DeviceName(l.from_device) + " -> " + DeviceName(l.to_device);
  }
  if (IsSpineLink(id)) {
    const int rel = id - spine_link_offset_;
    const int leaf_id = rel / 2 / spines_;
    const std::string leaf = "leaf " + std::to_string(leaf_id);
    const std::string spine = DeviceName(spine_device_offset_ +
                                         leaf_id / (leaves_ / pods_) * spines_ + rel / 2 % spines_);
    return "spines: " + (rel % 2 == 0 ? leaf + " -> " + spine : spine + " -> " + leaf);
  }
  LinkInfo l = link(id);
  return "dim " + std::to_string(l.dim) + ": " + DeviceName(l.from_device) + " -> " +
         DeviceName(l.to_device);
}

void Topology::Route(int src, int dst, std::vector<int>* links) const {
  links->clear();
  RouteFrom(src, dst, 0, dims(), links);
  if (!link_fold_.empty()) {
    for (int& l : *links) l = link_fold_[l];
  }
}

void Topology::set_link_fold(std::vector<int> fold, bool copies_of_orbit) {
  link_fold_ = std::move(fold);
  link_copies_.clear();
  if (link_fold_.empty() || !copies_of_orbit) return;
  // Orbit sizes; the group's order is the largest (an NPU's links' orbits).
  std::vector<int> orbit(link_fold_.size(), 0);
  for (int rep : link_fold_) ++orbit[rep];
  const int order = *std::max_element(orbit.begin(), orbit.end());
  bool any = false;
  std::vector<int> copies(link_fold_.size(), 1);
  for (size_t id = 0; id < orbit.size(); ++id) {
    if (orbit[id] == 0 || orbit[id] == order) continue;
    GENIE_CHECK_EQ(order % orbit[id], 0) << LinkName(static_cast<int>(id));
    copies[id] = order / orbit[id];
    any = true;
  }
  if (any) link_copies_ = std::move(copies);
}

int Topology::FlowPaths(int src, int dst, int channel) const {
  if (!CrossesSpines(src, dst)) return 1;
  if (CrossesPods(src, dst)) return super_spines_;
  return PinnedSpine(src, dst, channel) >= 0 ? 1 : spines_;
}

void Topology::LeafSpineLinks(int npu, std::vector<int>* links) const {
  links->clear();
  if (spines_ == 0) return;
  const int leaf = Leaf(npu);
  for (int s = 0; s < spines_; ++s) {
    links->push_back(Uplink(leaf, s));
    links->push_back(Downlink(leaf, s));
  }
  // With a third tier, its pod's links to and from the super-spines too.
  for (int k = 0; k < super_spines_; ++k) {
    const int spine = k / (super_spines_ / spines_);
    links->push_back(SuperUplink(Pod(npu), spine, k));
    links->push_back(SuperDownlink(Pod(npu), spine, k));
  }
}

int Topology::FabricLinkOwner(int id) const {
  if (IsSuperLink(id)) return (id - super_link_offset_) / 2 / super_spines_;
  return (id - spine_link_offset_) / 2 / spines_;
}

int Topology::FabricOwnerNpu(int id) const {
  const int owner = FabricLinkOwner(id);
  if (IsSuperLink(id)) return owner * dims_[leaf_dim_ + 2].stride;
  // Leaf `owner` = low + stride(L) (c(L+1) + n(L+1) c(L+2)): its host with coordinate L 0.
  const Dim& dl = dims_[leaf_dim_];
  const Dim& du = dims_[leaf_dim_ + 1];
  const int low = owner % dl.stride, across = owner / dl.stride;
  return low + du.stride * (across % du.size) + du.stride * du.size * (across / du.size);
}

int Topology::MoveFabricLink(int id, int to) const {
  if (IsSuperLink(id)) {
    const int rel = id - super_link_offset_;
    return super_link_offset_ + 2 * super_spines_ * to + rel % (2 * super_spines_);
  }
  const int rel = id - spine_link_offset_;
  return spine_link_offset_ + 2 * spines_ * to + rel % (2 * spines_);
}

void Topology::FlowRoute(int src, int dst, int path, std::vector<int>* links,
                         int channel) const {
  if (!CrossesSpines(src, dst)) {
    Route(src, dst, links);
    return;
  }
  const bool pods = CrossesPods(src, dst);
  GENIE_CHECK(path >= 0 && path < (pods ? super_spines_ : spines_)) << "path " << path;
  // Across pods, path q is super-spine q, reached through spine q / (K/S) of each pod.
  int spine = pods ? path / (super_spines_ / spines_) : path;
  const int pinned = PinnedSpine(src, dst, channel);
  if (pinned >= 0) spine = pinned;
  links->clear();
  // Below the leaf dimension first (a rail-optimized fabric: NVLink to the GPU on dst's rail).
  const int cur = RouteFrom(src, dst, 0, leaf_dim_, links);
  const Dim& dl = dims_[leaf_dim_];
  const Dim& du = dims_[leaf_dim_ + 1];
  const int leaf = Leaf(cur), to_leaf = Leaf(dst);
  // The host of dst, reached with cur's coordinates on the dimensions above (ranks of a host).
  int mid = cur + (Coordinate(dst, leaf_dim_) - Coordinate(cur, leaf_dim_)) * dl.stride +
            (Coordinate(dst, leaf_dim_ + 1) - Coordinate(cur, leaf_dim_ + 1)) * du.stride;
  if (super_spines_ > 0) mid += (Pod(dst) - Pod(cur)) * dims_[leaf_dim_ + 2].stride;
  links->push_back(dl.link_offset + Group(cur, leaf_dim_) * dl.links_per_group +
                   Coordinate(cur, leaf_dim_));
  links->push_back(Uplink(leaf, spine));
  if (pods) {
    links->push_back(SuperUplink(Pod(cur), spine, path));
    links->push_back(SuperDownlink(Pod(dst), spine, path));
  }
  links->push_back(Downlink(to_leaf, spine));
  links->push_back(dl.link_offset + Group(mid, leaf_dim_) * dl.links_per_group + dl.size +
                   Coordinate(mid, leaf_dim_));
  RouteFrom(mid, dst, leaf_dim_ + (super_spines_ > 0 ? 3 : 2), dims(), links);
  if (!link_fold_.empty()) {
    for (int& l : *links) l = link_fold_[l];
  }
}

double Topology::link_bytes_per_ns(int id) const {
  if (IsSuperLink(id)) return super_bytes_per_ns_;
  return IsSpineLink(id) ? spine_bytes_per_ns_ : dims_[link(id).dim].bytes_per_ns;
}

double Topology::link_latency_ns(int id) const {
  if (IsSuperLink(id)) return super_latency_ns_;
  return IsSpineLink(id) ? spine_latency_ns_ : dims_[link(id).dim].latency_ns;
}

int Topology::RouteFrom(int cur, int dst, int first_dim, int end_dim,
                        std::vector<int>* links) const {
  for (int dim = first_dim; dim < end_dim; ++dim) {
    const Dim& d = dims_[dim];
    int from = Coordinate(cur, dim);
    int to = Coordinate(dst, dim);
    if (from == to) continue;
    int base = d.link_offset + Group(cur, dim) * d.links_per_group;
    switch (d.kind) {
      case TopologyKind::kRing: {
        int cw = (to - from + d.size) % d.size;
        int ccw = d.size - cw;
        if (ccw < cw) {  // strictly shorter, as ASTRA-sim decides
          for (int k = 0, c = from; k < ccw; ++k, c = (c - 1 + d.size) % d.size) {
            links->push_back(base + d.size + c);
          }
        } else {
          for (int k = 0, c = from; k < cw; ++k, c = (c + 1) % d.size) {
            links->push_back(base + c);
          }
        }
        break;
      }
      case TopologyKind::kFullyConnected:
        links->push_back(base + from * (d.size - 1) + (to < from ? to : to - 1));
        break;
      case TopologyKind::kSwitch:
        links->push_back(base + from);
        links->push_back(base + d.size + to);
        break;
    }
    cur += (to - from) * d.stride;
  }
  return cur;
}

}  // namespace genie::sim
