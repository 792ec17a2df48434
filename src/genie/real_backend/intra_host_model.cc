#include "genie/real_backend/intra_host_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace genie::real_backend {

Result<IntraHostModel> IntraHostModel::Create(const config::NetworkConfig& host, int world_size) {
  GENIE_ASSIGN_OR_RETURN(sim::Topology topology, sim::Topology::Create(host));
  const int per_host = topology.npus();
  const std::string name = host.path.empty() ? "the intra-host model" : host.path;
  if (per_host < 1 || world_size % per_host != 0) {
    return Status::InvalidArgument(fmt::format(
        "{} describes hosts of {} ranks, but the job has {} ranks; the world size must be a "
        "multiple of the ranks per host (npus_count)",
        name, per_host, world_size));
  }
  return IntraHostModel(std::move(topology), per_host);
}

TimeNs IntraHostModel::Deliver(int src, int dst, Bytes bytes, TimeNs now) {
  const int a = src % ranks_per_host_;
  const int b = dst % ranks_per_host_;
  topology_.Route(a, b, &route_);
  if (route_.empty()) return now;
  const int first = route_.front();
  const int dim = topology_.link(first).dim;
  const auto serialise =
      static_cast<TimeNs>(std::floor(static_cast<double>(bytes) / topology_.bytes_per_ns(dim)));
  TimeNs& free_at = link_free_[static_cast<size_t>(first)];
  const TimeNs start = std::max(now, free_at);
  free_at = start + serialise;
  return start + topology_.UnawareDelay(a, b, bytes);
}

}  // namespace genie::real_backend
