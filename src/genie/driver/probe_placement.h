// Where bbr's PROBE_RTT goes in a measured iteration's own prediction (driver/run_results.cc):
// the flow model probes each connection on bbr's grid from when it opened (network.yml
// probe_rtt, sim/flow_model.h), and these set, per rank, how long its connections had been
// open (MeasuredIteration::since_open_ns) so that the probes fall where the run had them, at
// the same share of the predicted step as of the measured one: a job predicted alone beside a
// neighbour runs its iteration in half the time it took, and would else end before its probe.
// Where the run recorded its probes (RankSummary::probe_rtt_at_ns, net/tcp/probe_rtt_watch.h)
// each rank's goes where it was recorded, and nowhere else; otherwise on the grid from each
// rank's first op and its connections' time up before it. Pure; any thread.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/units.h"
#include "genie/config/network_config.h"
#include "genie/driver/simulation.h"

namespace genie::driver {

// Per rank of `n`, how long its connections were up before its first op: its traffic record's
// startup.ready_to_first_op_ns in a results document's provenance (`run_info`); 0 when not
// recorded.
std::vector<TimeNs> ConnectedBeforeFirstOp(int n, const nlohmann::json& run_info);

// On the grid: where in the predicted iteration (ns from its start) the probe due in measured
// iteration `m` (`measured_ns` long) goes, at the share of the predicted step (`predicted_ns`)
// its due time is of the measured one, which may lie past the predicted end. nullopt: no
// probes, or none due in the measured iteration nor in the prediction.
std::optional<double> ProbeAt(const config::NetworkConfig& net, const MeasuredIteration& m,
                              TimeNs measured_ns, TimeNs predicted_ns);

// Recorded: `m` with each rank's connections probing where the run recorded it
// (MeasuredIteration::probe_at_ns), at the share of the predicted step it was of the measured
// one, and nowhere else (`measured_ns` 0: nowhere at all).
MeasuredIteration WithRecordedProbes(const config::NetworkConfig& net, const MeasuredIteration& m,
                                     TimeNs measured_ns, TimeNs predicted_ns);

}  // namespace genie::driver
