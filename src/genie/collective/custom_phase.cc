// Runs a loaded custom algorithm (MSCCL-IR / Chakra custom collective) as one phase: the
// chunk's bytes are cut into the algorithm's chunks and its steps become logical steps on
// them, keeping the algorithm's own channels and dependencies.
#include "genie/collective/geometry.h"
#include "genie/collective/phase.h"

namespace genie::collective::internal {

Status BuildCustom(const PhaseSpec& p, PhaseBuilder* b) {
  if (!p.custom) return Status::InvalidArgument("custom algorithm chosen but no file loaded");
  const CustomAlgorithm& a = *p.custom;
  const std::vector<ByteRange> parts = SplitAll(p.region, a.chunks);
  auto range = [&](const CustomStep& s) {
    const ByteRange first = parts[s.chunk];
    const ByteRange last = parts[s.chunk + s.count - 1];
    return ByteRange{first.offset, last.offset + last.length - first.offset};
  };
  for (const CustomStep& s : a.steps[static_cast<size_t>(p.me)]) {
    uint32_t i = 0;
    const ByteRange r = range(s);
    switch (s.kind) {
      case StepKind::kSend: i = b->Send(s.send_peer, r, s.deps); break;
      case StepKind::kRecv: i = b->Recv(s.recv_peer, r, false, s.deps); break;
      case StepKind::kRecvReduce: i = b->Recv(s.recv_peer, r, true, s.deps); break;
      case StepKind::kRecvCopySend:
        i = b->RecvSend(s.recv_peer, s.send_peer, r, false, s.deps);
        break;
      case StepKind::kRecvReduceSend:
        i = b->RecvSend(s.recv_peer, s.send_peer, r, true, s.deps);
        break;
    }
    b->mutable_steps()[i].channel = s.channel;
  }
  return Status::Ok();
}

}  // namespace genie::collective::internal
