// OpEvent: what happened to one executed Chakra node on one rank — when it ran and, for
// communication, what it moved. The executor (simulated or real) produces one per finished node
// and hands it to a Recorder; report/ turns them into results files, tables and traces.
// Plain value type; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/workload/op.h"

namespace genie::record {

// One chunk's phase of a multi-dimensional collective on this rank: which dimension it ran on,
// what it did there, and when (same clock as OpEvent::start/end).
struct PhaseSpan {
  uint32_t chunk = 0;
  uint16_t dim = 0;
  CollectiveType op = CollectiveType::kAllReduce;
  TimeNs start = 0;
  TimeNs end = 0;
};

struct OpEvent {
  int rank = 0;
  int iteration = 0;  // 0-based measured iteration; negative = warm-up (left out of statistics)
  NodeId node = 0;
  std::string name;
  OpKind kind = OpKind::kInvalid;
  bool is_cpu_op = false;
  TimeNs start = 0;  // ns: virtual in simulation, wall time since run start in real runs
  TimeNs end = 0;

  // Communication (kind kCollective / kSend / kRecv).
  CollectiveType coll_type = CollectiveType::kAllReduce;  // meaningful for kCollective only
  Bytes size = 0;              // Chakra comm_size (all-gather: each rank's input)
  int64_t group = kWorldGroup;
  int group_size = 0;          // ranks taking part (the n of the nccl-tests formulas)
  std::string algorithm;       // e.g. "ring" or "ring,direct" (one per dimension)
  int peer = -1;               // SEND/RECV peer
  Bytes bytes_sent = 0;        // what this rank put on the wire
  Bytes bytes_received = 0;    // what this rank took off the wire
  // Collectives on more than one dimension: each chunk's phases in the order they ended
  // (written to the rank stream as "phases"; how chunks crossed the dimensions, e.g. themis).
  std::vector<PhaseSpan> phases;

  TimeNs duration() const { return end - start; }
  bool is_comm() const {
    return kind == OpKind::kCollective || kind == OpKind::kSend || kind == OpKind::kRecv;
  }
};

}  // namespace genie::record
