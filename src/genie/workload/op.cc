#include "genie/workload/op.h"

namespace genie {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kInvalid: return "invalid";
    case OpKind::kMetadata: return "metadata";
    case OpKind::kMemLoad: return "mem_load";
    case OpKind::kMemStore: return "mem_store";
    case OpKind::kCompute: return "compute";
    case OpKind::kCollective: return "collective";
    case OpKind::kSend: return "send";
    case OpKind::kRecv: return "recv";
  }
  return "unknown";
}

}  // namespace genie
