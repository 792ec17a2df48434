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
// Immutable after Create(); any thread may read it.
#pragma once

#include <string>
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
    return (rank / dims_[dim].stride) % dims_[dim].size;
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
  std::string DeviceName(int device) const;  // "npu 3" or "switch 2 (dim 0)"
  std::string LinkName(int id) const;        // "dim 0: npu 3 -> switch 8 (dim 0)"
  // Replaces `links` with the links a message from src to dst crosses in order, routing
  // dimension by dimension from dim 0 up (ASTRA-sim's multi-dimensional route).
  void Route(int src, int dst, std::vector<int>* links) const;

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
  };
  int Group(int rank, int dim) const;
  int MemberOf(int group, int dim, int coord) const;  // rank of `coord` in building block

  std::vector<Dim> dims_;
  std::string path_;  // the network.yml, for errors
  int npus_ = 0;
  int num_links_ = 0;
  int num_devices_ = 0;
};

}  // namespace genie::sim
