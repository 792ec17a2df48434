// IntraHostModel: the network inside one host (e.g. 8 GPUs on a 900 GB/s NVLink switch) that a
// real run models instead of sending, so only traffic that would cross the real fabric
// crosses it. Described by a network.yml of its own (`genie run --intra-host host.yml`): its
// NPU count is the ranks per host, and hosts hold consecutive ranks (rank / ranks_per_host),
// as mpiexec -ppn, srun's block distribution and torchrun place them — and as ASTRA-sim's
// dimension 0 numbers them.
//
// A message between two ranks of one host is delivered at a modelled time: it queues behind
// the sender's earlier messages on its first link, then takes ASTRA-sim's congestion-unaware
// delay (hops × latency + bytes / bandwidth) on the host topology. The sender computes that
// time and ships it with the message (net::SendOp::remote_data); both ranks complete at it.
// Ranks of one host share CLOCK_MONOTONIC, so the deadline means the same on both sides.
//
// Owned by one rank's RealBackend; not thread-safe.
#pragma once

#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/config/network_config.h"
#include "genie/sim/topology.h"

namespace genie::real_backend {

class IntraHostModel {
 public:
  // Errors name the config and say what to fix (e.g. world size not a multiple of the host).
  static Result<IntraHostModel> Create(const config::NetworkConfig& host, int world_size);

  int ranks_per_host() const { return ranks_per_host_; }
  int HostOf(int rank) const { return rank / ranks_per_host_; }
  bool SameHost(int a, int b) const { return HostOf(a) == HostOf(b); }

  // When a message of `bytes` from `src` to `dst` (same host, src != dst), posted at `now`,
  // arrives. Books the sender's first link: call once per message, in posting order.
  TimeNs Deliver(int src, int dst, Bytes bytes, TimeNs now);

 private:
  IntraHostModel(sim::Topology topology, int ranks_per_host)
      : topology_(std::move(topology)),
        ranks_per_host_(ranks_per_host),
        link_free_(static_cast<size_t>(topology_.num_links()), 0) {}

  sim::Topology topology_;
  int ranks_per_host_;
  std::vector<TimeNs> link_free_;  // when each link of this host finishes what was booked
  std::vector<int> route_;         // scratch
};

}  // namespace genie::real_backend
