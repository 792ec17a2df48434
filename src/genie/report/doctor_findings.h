// Doctor findings: what `genie doctor`'s measurements of a fabric say — which host's transmit or
// receive side, which pair, which link is slow, slow to answer or losing packets — and the table
// and JSON it prints. Each measurement is judged against its peers (the median of the same
// measurement over every host or pair), so a scan needs no prior knowledge of the fabric; an
// expected goodput (`--expect`, the testbed's link rate) adds a fabric-wide check. A host side is
// named only when most of its transfers are slow — one slow transfer names a pair — so a host is
// never blamed for its partner. Where the scan knows each direction's switch links (a
// leaf-spine testbed), slow transfers one link explains name that link and its direction, and
// count against no host (path_blame.h). Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace genie::report {

// The goodput a link gives TCP, as a fraction of its rate (the flow model's default; iperf3
// measures 0.93–0.96 through tbf here, REFERENCE §4): what a host alone on its link should get.
inline constexpr double kTcpGoodput = 0.94;

// A switch-to-switch link one direction crossed, one way, as a testbed's counters saw it while
// that direction's pair was probed alone (whatever the ECMP hashing picked): the share of its
// bytes that went that way, and the bytes that link end's queue held on average meanwhile (a
// slow link end keeps a queue, a healthy one downstream of it, fed at the slower rate, none).
struct Crossing {
  std::string link;      // "l0-s1"
  std::string from, to;  // "l0", "s1": the way it was crossed
  double share = 1;
  double held = 0;
};
// The switch links one direction crossed (none: it stayed within a switch).
struct TransferPath {
  int from = -1, to = -1;  // rank indices
  std::vector<Crossing> crossings;
};

// One scan, gathered on rank 0. Matrices are [from][to] (rank indices), NaN where not measured.
struct DoctorScan {
  std::vector<std::string> hosts;                 // one label per rank ("h3", a hostname)
  std::vector<std::vector<double>> gbps;          // one direction's goodput, alone on its path
  std::vector<std::vector<double>> rtt_us;        // round trip of a small message (symmetric)
  std::vector<std::vector<double>> retrans;       // fraction of segments sent again, from -> to
  std::vector<double> ring_gbps;                  // [rank] receive rate, every rank sending on
  double incast_gbps = 0;                         // rank 0's receive rate, all others sending
  // Rank 0's send rate to rank 1 while ranks 2.. send into it (0: fewer than 3 ranks). Well
  // below the pair's alone it is the transport's windows, not a fault: IncastSendNote.
  double incast_send_gbps = 0;
  std::vector<double> alltoall_gbps;              // [rank] receive rate, everyone to everyone
  double expected_gbps = 0;                       // one link's goodput when known, else 0
  std::string expected_source;                    // "--expect 400mbit", "testbed t1 (...)"
  double seconds = 0;                             // the scan's wall time
  double bytes_per_direction = 0;
  int remeasured = 0;  // slow directions measured again alone (their alone figure is in gbps)
  int contended = 0;   // of those, slow only while other pairs ran (shared paths, not faults)
  // Learnt paths (path_blame.h), one per direction probed alone on a testbed; empty: unknown.
  std::vector<TransferPath> paths;
  // One switch (a star testbed): every pair's path is its two host links, with no uplink or
  // ECMP choice to share, so a host uneven only while every host sends is its own or its CPU's.
  bool one_switch = false;
  // Ranks shared a host (--allow-shared-host): every figure is that machine's loopback; the
  // report says so on every table and gives no verdict.
  bool loopback = false;
};

struct DoctorThresholds {
  double slow = 0.7;          // a transfer is slow below this fraction of its peers' median
  double fabric = 0.8;        // the fabric is slow when the median is below this x expected
  double latency = 3.0;       // a round trip is slow above this x the median ...
  double latency_floor_us = 500;  // ... and this much above it (scheduler noise is not a fault)
  double loss = 0.005;        // a transfer is lossy when it retransmits more than this fraction
  // A host's ring, incast or all-to-all rate is named below this fraction of its peers': with
  // every host sending at once, CPUs and queues make those rates uneven even when healthy.
  double pattern = 0.5;
};

enum class FindingKind {
  kFabricSlow,     // every transfer is below what the fabric should give
  kSlowTransmit,   // one host's transmit side
  kSlowReceive,    // one host's receive side
  kSlowLink,       // one host's link, both directions
  kSlowPair,       // one direction between two hosts
  kSlowUplink,     // a switch-to-switch link, in one direction or both, explains slow transfers
  kSlowPath,       // slow transfers that one of several parts explains, the evidence cannot say which
  kHighLatency,    // one host's link answers slowly
  kSlowPairLatency,
  kLossy,          // one host's link drops packets
  kLossyPair,
  kRing,           // a ring hop slow only when every host sends at once
  kIncast,         // many-to-one into rank 0 below one link's goodput
  kAllToAll,       // a host's all-to-all receive rate below its peers'
};
const char* FindingName(FindingKind kind);

struct Finding {
  FindingKind kind;
  int host = -1;  // the host named (rank index), or the sender of a pair
  int peer = -1;  // the receiver of a pair
  double value = 0;     // what was measured (GB/s, µs or a fraction)
  double expected = 0;  // what its peers (or the fabric) gave
  std::string text;     // one sentence: what, where, how far off
  std::string link = {};       // kSlowUplink: the link's id ("l0-s1")
  std::string direction = {};  // kSlowUplink: "l0 -> s1", "s1 -> l0" or "both ways"
  std::vector<std::string> candidates = {};  // kSlowPath: each part that could explain them
};

struct DoctorVerdict {
  std::vector<Finding> findings;
  // Per host, medians of its transfers: transmit and receive GB/s, round trip µs.
  std::vector<double> tx_gbps, rx_gbps, rtt_us;
  double reference_gbps = 0;  // the median transfer every one is judged against
  double reference_rtt_us = 0;
  bool healthy() const { return findings.empty(); }
};

DoctorVerdict Diagnose(const DoctorScan& scan, const DoctorThresholds& t = {});
// The per-host table, then the findings (or "healthy"), for a terminal.
// Rank 0's sending under incast over what it sends rank 1 alone (the pairwise figure; the
// median pair when that is missing); -1 when not measured (fewer than 3 hosts).
double IncastSendShare(const DoctorScan& scan, double median_gbps);
// A line on it when below kIncastSendShare on a fabric without findings ("" otherwise): rank
// 0's ACKs wait in the switch's queue toward its host, and a window that does not cover that
// round trip (bbr's bounded one; cubic's while small) leaves its link idle. Not a finding: the
// fabric carries what it is given, and a prediction of max-min shares does not have it.
inline constexpr double kIncastSendShare = 0.45;
std::string IncastSendNote(const DoctorScan& scan, const DoctorVerdict& verdict);

std::string FormatDoctorReport(const DoctorScan& scan, const DoctorVerdict& verdict);
// The expected rate, the per-host table (with the ring and all-to-all columns when
// `patterns`) and the findings: FormatDoctorReport's body, shared with a run's localisation.
std::string FormatHostFindings(const DoctorScan& scan, const DoctorVerdict& verdict,
                               bool patterns);
nlohmann::json DoctorJson(const DoctorScan& scan, const DoctorVerdict& verdict);

}  // namespace genie::report
