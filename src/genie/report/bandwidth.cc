#include "genie/report/bandwidth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace genie::report {

double NcclBytes(CollectiveType type, Bytes comm_size, int n) {
  double s = static_cast<double>(comm_size);
  switch (type) {
    case CollectiveType::kAllGather:
    case CollectiveType::kGather:
      return s * n;
    case CollectiveType::kBarrier:
      return 0;
    default:
      return s;
  }
}

double BusBwFactor(CollectiveType type, int n) {
  if (n <= 0) return 0;
  double nn = n;
  switch (type) {
    case CollectiveType::kAllReduce:
      return 2.0 * (nn - 1) / nn;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
    case CollectiveType::kAllToAll:
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return (nn - 1) / nn;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      return 1;
    case CollectiveType::kBarrier:
      return 0;
  }
  return 0;
}

double AlgBw(CollectiveType type, Bytes comm_size, int n, TimeNs t) {
  if (t <= 0) return 0;
  // bytes per ns == 1e9 bytes per second == GB/s.
  return NcclBytes(type, comm_size, n) / static_cast<double>(t);
}

double BusBw(CollectiveType type, Bytes comm_size, int n, TimeNs t) {
  return AlgBw(type, comm_size, n, t) * BusBwFactor(type, n);
}

double P2pBw(Bytes size, TimeNs t) {
  if (t <= 0) return 0;
  return static_cast<double>(size) / static_cast<double>(t);
}

double AlgBw(const record::OpEvent& e) {
  switch (e.kind) {
    case OpKind::kCollective:
      return AlgBw(e.coll_type, e.size, e.group_size, e.duration());
    case OpKind::kSend:
    case OpKind::kRecv:
      return P2pBw(e.size, e.duration());
    default:
      return 0;
  }
}

double BusBw(const record::OpEvent& e) {
  switch (e.kind) {
    case OpKind::kCollective:
      return BusBw(e.coll_type, e.size, e.group_size, e.duration());
    case OpKind::kSend:
    case OpKind::kRecv:
      return P2pBw(e.size, e.duration());
    default:
      return 0;
  }
}

std::string FormatBandwidth(double gbps) {
  if (!std::isfinite(gbps)) return "-";
  if (gbps == 0) return "0";
  // Decimals for three significant digits: the same rule as the report page's sig3().
  const int decimals = std::max(0, 2 - static_cast<int>(std::floor(std::log10(std::fabs(gbps)))));
  return fmt::format("{:.{}f}", gbps, decimals);
}

}  // namespace genie::report
