// Schedule: one rank's part of a collective as data — the point-to-point steps it performs over
// byte ranges of its working buffer, and the dependencies between them. Produced by the pure
// planner (Plan), checked symbolically for all ranks at once (schedule_checker), executed by
// runtime/collective_runner on any Backend. Value type; any thread.
//
// Execution contract (the runner and the checker both follow it):
//  - Steps are grouped into phases; a phase is one chunk (dataset split) of the collective on
//    one topology dimension. Phase i of chunk k starts only when phase i-1 of chunk k is done.
//    How many chunks may be inside phases of one dimension at once is the runner's business
//    (active-chunks-per-dimension, LIFO/FIFO) and does not change correctness.
//  - Inside a phase a step starts when all its `deps` (indices into `steps`, always earlier
//    steps of the same phase) are complete. A step with a receive completes when its message
//    has arrived (and been reduced/copied); a send-only step completes when its message is sent.
//  - Sends and receives match by (sender, receiver, tag); tags are unique per ordered rank pair
//    within one collective, so matching never depends on arrival order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/workload/op.h"

namespace genie::collective {

struct ByteRange {
  Bytes offset = 0;
  Bytes length = 0;
  bool operator==(const ByteRange&) const = default;
};

enum class StepKind : uint8_t {
  kSend,            // send `send` range to send_peer
  kRecv,            // receive from recv_peer into `recv` range (overwrites)
  kRecvReduce,      // receive from recv_peer and reduce (sum) into `recv` range
  kRecvReduceSend,  // receive+reduce into `recv`, then send that same range to send_peer
  kRecvCopySend,    // receive into `recv`, then forward that same range to send_peer
};
const char* StepKindName(StepKind kind);
inline bool HasSend(StepKind k) {
  return k == StepKind::kSend || k == StepKind::kRecvReduceSend || k == StepKind::kRecvCopySend;
}
inline bool HasRecv(StepKind k) { return k != StepKind::kSend; }
inline bool HasReduce(StepKind k) {
  return k == StepKind::kRecvReduce || k == StepKind::kRecvReduceSend;
}

struct Step {
  StepKind kind = StepKind::kSend;
  int send_peer = -1;     // global rank, when HasSend(kind)
  int recv_peer = -1;     // global rank, when HasRecv(kind)
  ByteRange send;         // source range (for *Send kinds equal to `recv`)
  ByteRange recv;         // destination range
  uint32_t send_tag = 0;  // tag of the outgoing message (unique per (me, send_peer))
  uint32_t recv_tag = 0;  // tag of the incoming message (unique per (recv_peer, me))
  uint16_t channel = 0;   // which of the pair's C parallel flows carries the message(s)
  std::vector<uint32_t> deps;
};

struct Phase {
  uint32_t chunk = 0;     // dataset split index
  uint16_t dim = 0;       // topology dimension the phase runs on
  CollectiveType op = CollectiveType::kAllReduce;  // what this phase does on that dimension
  uint32_t begin = 0;     // steps [begin, end) belong to this phase
  uint32_t end = 0;
};

struct Schedule {
  int rank = -1;          // global rank
  int group_index = -1;   // index in CollectiveSpec::group
  Bytes buffer_bytes = 0; // working buffer size; layout per collective type (buffer_layout.h)
  int channels = 1;
  std::vector<Step> steps;
  std::vector<Phase> phases;  // chunk-major: all phases of chunk 0, then chunk 1, ...
};

}  // namespace genie::collective
