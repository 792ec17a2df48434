// Bandwidth figures by the nccl-tests rules (REFERENCE §3, docs/metrics.md), so genie's numbers
// read like the ones users see from nccl-tests every day:
//   algbw = S / t  (GB/s = 1e9 bytes/s, i.e. bytes per ns)
//   busbw = algbw × factor: all-reduce 2(n−1)/n; reduce-scatter, all-gather, all-to-all,
//           gather, scatter (n−1)/n; broadcast, reduce, send/recv 1; barrier moves no data.
// S is nccl-tests' byte count. Chakra's comm_size differs for all-gather (and gather): there it
// is each rank's input, so S = comm_size × n; for every other type comm_size is already S.
// A zero or negative time gives 0 (no figure) rather than infinity. Pure; any thread.
#pragma once

#include <string>

#include "genie/common/units.h"
#include "genie/record/op_event.h"
#include "genie/workload/op.h"

namespace genie::report {

// nccl-tests' S in bytes for a collective of Chakra comm_size over n ranks.
double NcclBytes(CollectiveType type, Bytes comm_size, int n);
// busbw / algbw.
double BusBwFactor(CollectiveType type, int n);

double AlgBw(CollectiveType type, Bytes comm_size, int n, TimeNs t);
double BusBw(CollectiveType type, Bytes comm_size, int n, TimeNs t);

// Point-to-point (nccl-tests' sendrecv): S = size, factor 1.
double P2pBw(Bytes size, TimeNs t);

// The figures of one recorded communication op (kCollective uses coll_type/size/group_size over
// the op's duration; kSend/kRecv use P2pBw). Non-communication ops give 0.
double AlgBw(const record::OpEvent& event);
double BusBw(const record::OpEvent& event);

// A bandwidth (GB/s) with three significant digits — 0.117, 1.20, 47.1, 118 (whole numbers from
// 100 on) — as the terminal summaries and the HTML report (its sig3) print it, so that a 1
// Gbit/s fabric does not read "0.12" for everything from 0.115 to 0.125.
std::string FormatBandwidth(double gbps);

}  // namespace genie::report
