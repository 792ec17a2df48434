// PeerSet: the ranks one rank exchanges messages with during a run, worked out from its own
// plans before the first operation: every collective node of its trace is planned (the same
// CollectivePlan the Executor uses when it issues it) and the send / receive peers of every
// step are collected, with the peers of point-to-point SEND / RECV nodes; the caller adds the
// world barrier's (IterationDriver::BarrierSpec) and the clock ping-pongs' (RealBackend).
// The transport then connects exactly these ranks — a ring all-reduce's two neighbours
// instead of the N-1 of a full mesh — so sockets, descriptors and buffers grow with what a
// workload uses, as NCCL and Gloo connect only the peers an algorithm uses.
//
// Why ahead of time rather than on first use: the plans are pure and deterministic, so both
// ends of every pair compute the same sets from the same trace and flags with no messages
// exchanged; every connection is then up before the first measured operation (a connect on
// first use would put a handshake inside a collective's time and, with simultaneous first
// sends, need a tie-break on the critical path). The cost is one extra pass over the trace's
// communication nodes at start-up, with identical plans computed once.
//
// Pure apart from reading the trace; the caller's thread.
#pragma once

#include <vector>

#include "genie/collective/schedule.h"
#include "genie/common/status.h"
#include "genie/runtime/executor_config.h"
#include "genie/workload/rank_graph.h"

namespace genie::runtime {

// Adds the ranks `schedule` sends to or receives from (other than `self`) to `peers`
// (kept sorted, without duplicates).
void AddSchedulePeers(const collective::Schedule& schedule, int self, std::vector<int>* peers);

// The peers of every COMM_COLL, COMM_SEND and COMM_RECV node of the rank's graph, ascending.
// Errors (a group without this rank, a plan that fails) name the rank and node, as the
// Executor would when issuing it.
Result<std::vector<int>> PlannedPeers(workload::RankGraph& graph, const ExecutorConfig& config);

}  // namespace genie::runtime
