#include "genie/collective/custom.h"

#include <string>
#include <vector>

#include "genie/collective/geometry.h"
#include "genie/collective/phase.h"

namespace genie::collective::internal {

Status CheckCustomFits(const spec::CustomAlgorithm& a, CollectiveType type, int group_size) {
  if (a.ranks != group_size) {
    return Status::InvalidArgument(a.source + " is written for " + std::to_string(a.ranks) +
                                   " ranks; the collective has " + std::to_string(group_size) +
                                   " (use it for collectives of that size only)");
  }
  const std::string want = type == CollectiveType::kAllReduce ? "allreduce" : "";
  if (want.empty() || (a.collective != want && !a.collective.empty())) {
    return Status::Unsupported(a.source + " implements '" + a.collective +
                               "'; custom algorithms run all-reduce only for now");
  }
  if (a.chunks < 1 || a.steps.size() != static_cast<size_t>(a.ranks)) {
    return Status::InvalidArgument(a.source + ": " + std::to_string(a.chunks) + " chunks and " +
                                   std::to_string(a.steps.size()) + " ranks of steps for a " +
                                   std::to_string(a.ranks) + "-rank algorithm");
  }
  // The readers check all of this; an algorithm built some other way must not crash the plan.
  for (int r = 0; r < a.ranks; ++r) {
    const std::vector<spec::CustomStep>& steps = a.steps[static_cast<size_t>(r)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const spec::CustomStep& s = steps[i];
      const std::string where = s.where.empty() ? a.source + ": rank " + std::to_string(r) +
                                                      " step " + std::to_string(i)
                                                : s.where;
      if (s.count < 1 || s.chunk + static_cast<uint64_t>(s.count) > static_cast<uint64_t>(a.chunks)) {
        return Status::InvalidArgument(where + ": chunks [" + std::to_string(s.chunk) + ", " +
                                       std::to_string(s.chunk + uint64_t{s.count}) +
                                       ") fall outside the " + std::to_string(a.chunks) +
                                       " chunks of the buffer");
      }
      const bool sends = s.kind == spec::CustomStepKind::kSend ||
                         s.kind == spec::CustomStepKind::kRecvCopySend ||
                         s.kind == spec::CustomStepKind::kRecvReduceSend;
      const bool recvs = s.kind != spec::CustomStepKind::kSend;
      auto peer_ok = [&](int p) { return p >= 0 && p < a.ranks && p != r; };
      if ((sends && !peer_ok(s.send_peer)) || (recvs && !peer_ok(s.recv_peer))) {
        return Status::InvalidArgument(where + ": rank " + std::to_string(r) + " exchanges with "
                                       "a peer that is not another of the algorithm's " +
                                       std::to_string(a.ranks) + " ranks");
      }
      for (uint32_t d : s.deps) {
        if (d >= i) {
          return Status::InvalidArgument(where + ": depends on step " + std::to_string(d) +
                                         ", which is not an earlier step of rank " +
                                         std::to_string(r));
        }
      }
    }
  }
  return Status::Ok();
}

Status BuildCustom(const PhaseSpec& p, PhaseBuilder* b) {
  if (!p.custom) return Status::InvalidArgument("custom algorithm chosen but none was loaded");
  const spec::CustomAlgorithm& a = *p.custom;
  const std::vector<ByteRange> parts = SplitAll(p.region, a.chunks);
  auto range = [&](const spec::CustomStep& s) {
    const ByteRange first = parts[s.chunk];
    const ByteRange last = parts[s.chunk + s.count - 1];
    return ByteRange{first.offset, last.offset + last.length - first.offset};
  };
  for (const spec::CustomStep& s : a.steps[static_cast<size_t>(p.me)]) {
    uint32_t i = 0;
    const ByteRange r = range(s);
    switch (s.kind) {
      case spec::CustomStepKind::kSend: i = b->Send(s.send_peer, r, s.deps); break;
      case spec::CustomStepKind::kRecv: i = b->Recv(s.recv_peer, r, false, s.deps); break;
      case spec::CustomStepKind::kRecvReduce: i = b->Recv(s.recv_peer, r, true, s.deps); break;
      case spec::CustomStepKind::kRecvCopySend:
        i = b->RecvSend(s.recv_peer, s.send_peer, r, false, s.deps);
        break;
      case spec::CustomStepKind::kRecvReduceSend:
        i = b->RecvSend(s.recv_peer, s.send_peer, r, true, s.deps);
        break;
    }
    b->mutable_steps()[i].channel = s.channel;
  }
  return Status::Ok();
}

}  // namespace genie::collective::internal
