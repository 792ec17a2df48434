// Attribution: for an iteration slower than its healthy expectation, who slowed it and by how
// much — a straggler (its own compute), another job's traffic (contention), the network, or
// nothing the evidence can name (unexplained) — each with its share of the step's excess.
//
// The shares come from counterfactual predictions of the same iteration (same start skew, idle
// time and issue order as measured; driver/attribution_inputs.h runs them):
//   E0  the healthy expectation: the trace's compute, no faults, this job alone;
//   Ec  the same with each rank's measured compute (and first-op delay) in place of the trace's;
//   together − alone  the model's cost of the neighbours, when the run is one of several jobs.
// excess = measured − E0; compute = Ec − E0; contention = together − alone; what remains is the
// network's when the measurement shows the network behind (comm ops slower than their
// prediction, a localised host or link, retransmissions) — unless the localisation probed every
// link the job used and found them healthy, with no retransmissions: then communication was
// slow for a reason the network does not show (the hosts' scheduling, a fault gone before the
// probe) — or when a rank waited for a core for over 5 % of the step (record/cpu_wait.h: the
// host's CPU read its sockets late) and nothing places the fault in the network; else
// unexplained. Each share is
// clamped so that they sum to the excess, in that order. A cause whose share is under the
// noise floor is not named. The evidence is the measurement only; never a fault schedule.
//
// Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/report/attribution_evidence.h"
#include "genie/report/ops_behind.h"

namespace genie::report {

// A share under this fraction of the iteration's healthy expectation is not named. Healthy
// iterations measure 0.98–1.08 × their prediction (docs/prediction.md: star:4 0.98–1.06,
// calibrated 0.99–1.02, chained small collectives 1.02–1.07, leaf-spine 0.99–1.08), so up to
// 8 % of a step is the model's error, not a cause; 10 % clears it.
inline constexpr double kAttributionFloor = 0.10;

// A place the run's localisation probe named (report/localization.h's findings).
struct NetworkPlace {
  std::string kind;  // "slow_transmit", "slow_link", "slow_uplink", ...
  std::string host;  // "h2" (or a link's id for an uplink)
  std::string text;  // the finding's sentence
};

// Another job sharing the fabric (genie launch --jobs) and the links it shares with this one.
struct Neighbour {
  std::string job;
  std::vector<std::string> links;
};

// This job's step predicted with its neighbours and alone (the flow model's, per iteration).
struct Contention {
  TimeNs together_ns = 0;
  TimeNs alone_ns = 0;
  std::vector<Neighbour> neighbours;
};

struct AttributionInput {
  int iteration = 0;
  TimeNs measured_ns = 0;
  TimeNs expected_ns = 0;                 // E0
  std::optional<TimeNs> with_compute_ns;  // Ec (none: the simulation could not be run)
  std::vector<RankCompute> compute;       // every rank's
  std::vector<Wait> waits;                // per late rank, the collective waited in longest
  std::optional<Contention> contention;
  std::vector<OpBehind> behind;          // ops behind the Ec prediction, most first
  std::vector<NetworkPlace> places;      // the localisation's findings
  bool probed = false;                   // the localisation ran (places empty: all healthy)
  std::vector<std::string> retransmits;  // "h2: 1204 of 80000 segments sent again"
  // This iteration's TCP retransmission timeouts (DescribeTimeouts, iteration_timeouts.h); ""
  // none. Each a stall of 200 ms or more that only loss causes: evidence of the network as
  // retransmissions are, whatever the probe or the CPU showed.
  std::string timeouts;
  // This iteration's bbr PROBE_RTT episodes (DescribeProbeRtt, iteration_probe_rtt.h); ""
  // none. The transport's own slowdown: evidence of the network as timeouts are, placed on no
  // link.
  std::string probe_rtt;
};

enum class Cause { kStraggler, kNetwork, kContention, kUnexplained };
const char* CauseName(Cause cause);  // "straggler", "network", "contention", "unexplained"

struct CauseShare {
  Cause cause = Cause::kUnexplained;
  TimeNs share_ns = 0;
  std::string culprit;                // "rank 1", "h2: both directions slow", "job b", ""
  std::vector<std::string> evidence;  // sentences, most telling first
  std::vector<RankCompute> ranks;     // straggler: the ranks named, most excess first
  std::optional<Wait> wait;           // straggler: where the others waited for it
  std::vector<NetworkPlace> places;   // network
  std::vector<OpBehind> ops;          // network: the ops behind
  std::vector<Neighbour> neighbours;  // contention
};

struct IterationAttribution {
  int iteration = 0;
  TimeNs measured_ns = 0, expected_ns = 0, excess_ns = 0;
  std::optional<TimeNs> with_compute_ns;
  // The stacked bar: compute + network + contention + rest = excess (rest: unexplained, or a
  // network share without evidence of a place or under the floor).
  TimeNs compute_ns = 0, network_ns = 0, contention_ns = 0, rest_ns = 0;
  double floor = kAttributionFloor;
  std::vector<CauseShare> causes;  // named, largest share first; empty: nothing named
};

IterationAttribution Attribute(const AttributionInput& in, double floor = kAttributionFloor);

// results.json "attribution": {"baseline": ..., "floor": ..., "iterations": [...]}, and back
// (missing keys read as defaults).
nlohmann::json AttributionJson(const std::vector<IterationAttribution>& iterations);
std::vector<IterationAttribution> AttributionFromJson(const nlohmann::json& j);

// "# who slowed the step ..." and per iteration one line per named cause with its evidence;
// "" when `iterations` is empty.
std::string FormatAttribution(const std::vector<IterationAttribution>& iterations);

}  // namespace genie::report
