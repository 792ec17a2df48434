// The human summary printed at the end of a run and by `genie results show`: rank and iteration
// counts, step time min/median/max, exposed communication and compute per rank, and a
// per-collective-type table in nccl-tests' style (time in µs, algbw/busbw in GB/s, footer
// "Avg bus bandwidth"). Pure; any thread.
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

void PrintSummary(std::ostream& out, const std::vector<record::OpEvent>& ops,
                  const std::vector<record::RankSummary>& ranks);

// One line from the ranks' "traffic" records (a merged run_info's "traffic" array): payload
// sent over the real network vs carried by the intra-host model. Prints nothing without them.
void PrintTraffic(std::ostream& out, const nlohmann::json& traffic);
// The run's testbed (results' provenance.testbed, written by rank 0 on a genie testbed): the
// faults and when each took effect (seconds after `origin_ns`, rank 0's clock), then per host
// the bytes its NICs sent and received, tbf drops on its links and TCP retransmissions during
// the run. Prints nothing for a run that was not on a testbed.
void PrintTestbed(std::ostream& out, const nlohmann::json& testbed, TimeNs origin_ns);
// Compute faults (results' provenance.compute_faults): when each took effect — one line per
// fault, action and iteration, naming its ranks, at the earliest rank's time after
// `origin_ns` — those never applied and why, then per rank its compute excess over the trace
// (and its stalls) from `ranks`. Prints nothing without compute faults.
void PrintComputeFaults(std::ostream& out, const nlohmann::json& events,
                        const std::vector<record::RankSummary>& ranks, TimeNs origin_ns);
// The earliest start of any op (0 when there is none): the run's start on rank 0's clock.
TimeNs FirstStart(const std::vector<record::OpEvent>& ops);

}  // namespace genie::report
