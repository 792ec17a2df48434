#include "genie/collective/schedule.h"

#include "genie/collective/planner.h"

namespace genie::collective {

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kSend: return "send";
    case StepKind::kRecv: return "recv";
    case StepKind::kRecvReduce: return "recv-reduce";
    case StepKind::kRecvReduceSend: return "recv-reduce-send";
    case StepKind::kRecvCopySend: return "recv-copy-send";
    case StepKind::kCopy: return "copy";
  }
  return "?";
}

Bytes BytesSent(const Schedule& schedule) {
  Bytes total = 0;
  for (const Step& s : schedule.steps) {
    if (HasSend(s.kind)) total += s.send.length;
  }
  return total;
}

uint64_t MessagesSent(const Schedule& schedule) {
  uint64_t n = 0;
  for (const Step& s : schedule.steps) n += HasSend(s.kind) ? 1 : 0;
  return n;
}

}  // namespace genie::collective
