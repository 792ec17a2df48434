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

// `m` with no probe in its simulation: every rank's connections open long after it ends.
MeasuredIteration WithoutProbes(const config::NetworkConfig& net, const MeasuredIteration& m);

// `m` with bbr's probes where the run had them, for measured iteration `m` (`measured_ns`
// long) predicted `predicted_ns` without them: each rank's recorded one when the run recorded
// its probes (`recorded`), else the grid's from its connections' age, at the same share of the
// predicted step as of the measured one and lasting the same share of it (at most the
// probe's own duration). nullopt: none falls in the measured iteration nor the predicted one.
std::optional<MeasuredIteration> WithProbesPlaced(const config::NetworkConfig& net,
                                                  const MeasuredIteration& m, TimeNs measured_ns,
                                                  TimeNs predicted_ns, bool recorded);

}  // namespace genie::driver
