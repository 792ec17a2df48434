// The doctor driver: one rank of `genie doctor`, a health scan of the fabric its ranks run on
// (one rank per host). Every pair of hosts is measured alone on the network in a round-robin
// of disjoint pairs (report/doctor_findings.h says how the figures are judged): each direction's
// goodput (twice, the better kept) and TCP retransmissions (over both), then the pair's round
// trip; then every host at once in a ring, all into rank 0 (incast), and everyone to
// everyone. Rank 0 gathers those figures; on a leaf-spine testbed every pair across leaves then
// sends alone once more while rank 0 reads the switches' counters, learning which switch links
// each direction crossed (pair_paths.h), and rank 0 judges them all. Then, on a healthy fabric (or with
// --ring-steps always), ring steps with every host active at every power of two from 8 KiB to
// 4 MiB (each host sends to its ring neighbour once the previous step's message arrived; on a
// leaf-spine testbed one ring per leaf), whose fit step = alpha + bytes / rate is the JSON's
// `ring_steps`, what `genie testbed calibrate` calibrates under load with
// (testbed/calibration.h). Rank 0 prints the table and the findings and writes the JSON. Runs
// on one thread, the rank's event loop.
#pragma once

#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/launch/rank_env.h"
#include "genie/real_backend/real_backend.h"
#include "genie/report/doctor_findings.h"

namespace genie::driver {

// When the ring steps run: only on a scan without findings (a calibration refuses any other),
// always (calibrate --accept-findings), or never.
enum class RingStepsMode { kHealthy, kAlways, kNever };

struct DoctorOptions {
  Bytes bytes = 4 << 20;      // per direction of each pair
  Bytes message = 256 << 10;  // the size of each message carrying them
  int pings = 20;             // round trips per pair (the median is kept)
  std::string bind = "127.0.0.1";
  TimeNs peer_timeout = 30 * kNsPerSec;
  uint64_t expect_bps = 0;    // --expect: the link rate every host should get
  std::string testbed;        // GENIE_TESTBED: the expected rate from its description
  std::string host;           // this rank's host label ("" = GENIE_HOST, then the hostname)
  std::string json_path;      // rank 0 writes the scan and findings here ("" = none)
  std::string report_path;    // rank 0 writes the HTML page of the scan here ("" = none)
  report::DoctorThresholds thresholds;
  RingStepsMode ring_steps = RingStepsMode::kHealthy;  // --ring-steps
  real_backend::TransportChoice transport;  // --transport, --fabric-*
  std::string tcp_congestion;               // TCP_CONGESTION on its sockets ("" = the host's)
  // Ranks that share a host (one network stack: the same address, or loopback) measure that
  // machine's CPUs and loopback, not a fabric: refused unless this is set, and then every
  // figure is marked loopback and no verdict on the fabric is given.
  bool allow_shared_host = false;
};

// "" when every rank has its own address off loopback; else what they share ("ranks 0 and 2
// both listen on 10.0.0.1", "rank 0 listens on loopback 127.0.0.1"). `addresses`: "ip:port"
// per rank.
std::string SharedHost(const std::vector<std::string>& addresses);

// Exit code: 0 healthy, 1 anomaly found (rank 0; other ranks 0), 2 could not run.
int RunDoctorRank(const DoctorOptions& options, const launch::RankEnv& env);

}  // namespace genie::driver
