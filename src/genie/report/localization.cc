#include "genie/report/localization.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace genie::report {

Result<Localization> Localize(const nlohmann::json& records, int world_size, double expected_gbps,
                              const std::string& expected_source) {
  if (!records.is_array()) return Status::InvalidArgument("localize records: not an array");
  if (world_size < 2) return Status::InvalidArgument("localize: a run of one rank has no links");
  const auto n = static_cast<size_t>(world_size);
  Localization l;
  DoctorScan& s = l.scan;
  s.hosts.assign(n, "");
  s.gbps.assign(n, std::vector<double>(n, std::nan("")));
  s.rtt_us = s.retrans = s.gbps;
  s.expected_gbps = expected_gbps;
  s.expected_source = expected_source;
  for (const auto& r : records) {
    const int rank = r.value("rank", -1);
    if (rank < 0 || rank >= world_size || !r.contains("peers") || !r["peers"].is_array()) {
      return Status::InvalidArgument(
          fmt::format("localize record of rank {}: no rank in 0..{} or no peers; the stream was "
                      "written by another genie version: run again",
                      rank, world_size - 1));
    }
    const auto me = static_cast<size_t>(rank);
    s.hosts[me] = r.value("host", "");
    s.bytes_per_direction = r.value("bytes_per_direction", 0.0);
    for (const auto& p : r["peers"]) {
      const int peer = p.value("peer", -1);
      if (peer < 0 || peer >= world_size || peer == rank) continue;
      const auto q = static_cast<size_t>(peer);
      // Rates are measured by the receiver, retransmissions by the sender, round trips by
      // the lower rank of the pair (and hold both ways).
      if (p.contains("rx_gbps")) s.gbps[q][me] = p["rx_gbps"].get<double>();
      if (p.contains("retrans")) s.retrans[me][q] = p["retrans"].get<double>();
      if (p.contains("rtt_us")) s.rtt_us[me][q] = s.rtt_us[q][me] = p["rtt_us"].get<double>();
      l.pairs += rank < peer;
    }
    // Rank 0's, on a leaf-spine testbed: the switch links each direction crossed.
    if (r.contains("paths") && r["paths"].is_array()) {
      for (const auto& p : r["paths"]) {
        TransferPath path{p.value("from", -1), p.value("to", -1), {}};
        if (path.from < 0 || path.to < 0 || path.from >= world_size || path.to >= world_size) continue;
        for (const auto& c : p.value("crossings", nlohmann::json::array())) {
          path.crossings.push_back({c.value("link", ""), c.value("from", ""), c.value("to", ""),
                                    c.value("share", 0.0), c.value("held", 0.0)});
        }
        s.paths.push_back(std::move(path));
      }
    }
  }
  // Two ranks on one host (a job packed two to a host) never crossed the fabric between them:
  // their figures are that machine's loopback and CPU, so they are left out of the judgement.
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      if (i == j || s.hosts[i].empty() || s.hosts[i] != s.hosts[j]) continue;
      s.gbps[i][j] = s.rtt_us[i][j] = s.retrans[i][j] = std::nan("");
      l.same_host_pairs += i < j;
    }
  }
  // Several ranks on one host (a loopback run) or none named: tell them apart by rank.
  auto& h = s.hosts;
  for (size_t i = 0; i < n; ++i) {
    if (h[i].empty() || std::count(h.begin(), h.end(), h[i]) > 1) {
      for (size_t j = 0; j < n; ++j) h[j] = h[j].empty() ? "r" + std::to_string(j) : h[j] + "/r" + std::to_string(j);
      break;
    }
  }
  l.verdict = Diagnose(s);
  return l;
}

std::string FormatLocalization(const Localization& l) {
  const double mib = l.scan.bytes_per_direction / (1 << 20);
  std::string out = fmt::format(
      "# localization: the {} pair(s) of ranks the workload used, each direction measured alone "
      "after the run ({:.2g} MiB)\n",
      l.pairs, mib);
  return out + FormatHostFindings(l.scan, l.verdict, /*patterns=*/false);
}

nlohmann::json LocalizationJson(const Localization& l) {
  nlohmann::json j = DoctorJson(l.scan, l.verdict);
  j["pairs"] = l.pairs;
  if (l.same_host_pairs > 0) j["same_host_pairs"] = l.same_host_pairs;
  // The doctor's collective patterns are not part of a run's probe.
  j.erase("incast_gbps");
  j.erase("remeasured_alone");
  j.erase("slow_only_concurrently");
  for (auto& h : j["per_host"]) {
    h.erase("ring_rx_gbps");
    h.erase("alltoall_rx_gbps");
  }
  return j;
}

}  // namespace genie::report
