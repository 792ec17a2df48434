#include "genie/driver/plan.h"

#include <cstdio>
#include <string>

#include "genie/collective/buffer_layout.h"
#include "genie/collective/schedule_checker.h"
#include "genie/common/units.h"

namespace genie::driver {
namespace {

using collective::Algorithm;
using collective::Schedule;

std::string Range(collective::ByteRange r) {
  return "[" + std::to_string(r.offset) + "," + std::to_string(r.offset + r.length) + ")";
}

void PrintSteps(const Schedule& s) {
  std::printf("rank %d (group index %d): buffer %llu B, %zu steps, %zu phases\n", s.rank,
              s.group_index, static_cast<unsigned long long>(s.buffer_bytes), s.steps.size(),
              s.phases.size());
  std::printf("  %5s %5s %4s %3s  %-17s %6s %6s %-24s %10s %5s %5s  %s\n", "step", "chunk", "dim",
              "ch", "kind", "from", "to", "range", "bytes", "rtag", "stag", "deps");
  for (const collective::Phase& p : s.phases) {
    for (uint32_t i = p.begin; i < p.end; ++i) {
      const collective::Step& st = s.steps[i];
      const bool rx = collective::HasRecv(st.kind), tx = collective::HasSend(st.kind);
      // A local copy shows where it writes, then "<" where it reads.
      const bool copy = st.kind == collective::StepKind::kCopy;
      const collective::ByteRange r = rx || copy ? st.recv : st.send;
      const std::string range = copy ? Range(r) + "<" + Range(st.send) : Range(r);
      std::string deps;
      for (size_t d = 0; d < st.deps.size(); ++d) {
        if (d == 8) {
          deps += ",...";
          break;
        }
        deps += (d ? "," : "") + std::to_string(st.deps[d]);
      }
      std::printf("  %5u %5u %4u %3u  %-17s %6s %6s %-24s %10llu %5s %5s  %s\n", i, p.chunk, p.dim,
                  st.channel, collective::StepKindName(st.kind),
                  rx ? std::to_string(st.recv_peer).c_str() : "-",
                  tx ? std::to_string(st.send_peer).c_str() : "-", range.c_str(),
                  static_cast<unsigned long long>(r.length),
                  rx ? std::to_string(st.recv_tag).c_str() : "-",
                  tx ? std::to_string(st.send_tag).c_str() : "-", deps.c_str());
    }
  }
}

}  // namespace

int ShowPlan(const collective::CollectiveSpec& spec, const PlanShowOptions& options) {
  auto all = collective::PlanAll(spec);
  if (!all.ok()) {
    std::fprintf(stderr, "genie plan: %s\n", all.status().message().c_str());
    return 1;
  }
  const collective::PlanOptions& o = spec.options;
  const int n = static_cast<int>(spec.group.size());
  std::string algs;
  for (Algorithm alg : o.algorithms) {
    algs += (algs.empty() ? "" : ",") + std::string(collective::AlgorithmName(alg));
  }
  std::printf("%s %s: %d ranks, size %llu B (%s), chunks %d, channels %d, slice %s\n",
              collective::CollectiveOpName(spec.type), algs.c_str(), n,
              static_cast<unsigned long long>(spec.size), FormatBytes(spec.size).c_str(),
              o.chunks, o.channels, o.slice_bytes ? FormatBytes(o.slice_bytes).c_str() : "none");
  int status = 0;
  if (options.check) {
    const Status st = collective::CheckSchedules(spec, *all);
    if (st.ok()) {
      std::printf("checker: ok (every send met its receive, no deadlock or race, final buffers "
                  "hold the right contributions)\n");
    } else {
      std::printf("checker: FAILED: %s\n", st.message().c_str());
      status = 1;
    }
  }
  if (options.rank >= 0) {
    int index = -1;
    for (int i = 0; i < n; ++i) {
      if (spec.group[static_cast<size_t>(i)] == options.rank) index = i;
    }
    if (index < 0) {
      std::fprintf(stderr, "genie plan: --rank %d is not in the group\n", options.rank);
      return 2;
    }
    PrintSteps((*all)[static_cast<size_t>(index)]);
  } else if (options.all_steps) {
    for (const Schedule& s : *all) PrintSteps(s);
  }
  std::printf("%8s %10s %10s %16s\n", "rank", "steps", "messages", "bytes sent");
  Bytes total = 0;
  uint64_t messages = 0;
  for (const Schedule& s : *all) {
    const Bytes b = collective::BytesSent(s);
    total += b;
    messages += collective::MessagesSent(s);
    std::printf("%8d %10zu %10llu %16llu\n", s.rank, s.steps.size(),
                static_cast<unsigned long long>(collective::MessagesSent(s)),
                static_cast<unsigned long long>(b));
  }
  std::printf("%8s %10s %10llu %16llu  (%s)\n", "total", "",
              static_cast<unsigned long long>(messages), static_cast<unsigned long long>(total),
              FormatBytes(total).c_str());
  return status;
}

}  // namespace genie::driver
