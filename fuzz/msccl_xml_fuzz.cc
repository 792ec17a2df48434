// libFuzzer target for MSCCL-IR XML custom algorithms (what MSCCLang, TACCL and TACOS emit; the
// *-implementation-custom files of a system.json, `genie plan --custom`), read by
// trace/msccl_xml.h. Whatever ParseMscclXml accepts must keep the promises the planner relies
// on — every peer another rank of the algorithm, every range inside the buffer's chunks, every
// dependency an earlier step of the same rank — and is then planned for every rank and checked
// symbolically, as `genie plan --custom` does (a wrong algorithm may fail the check; nothing may
// crash). Any input must give a Status, never a crash, hang, leak or sanitizer report.
//   build/fuzz/fuzz/msccl_xml_fuzz -dict=fuzz/dicts/msccl_xml.dict fuzz/corpus/msccl_xml_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"
#include "genie/trace/msccl_xml.h"

namespace {

using genie::spec::CustomAlgorithm;
using genie::spec::CustomStep;
using genie::spec::CustomStepKind;

void Check(bool ok, const char* what, const std::string& where) {
  if (ok) return;
  std::fprintf(stderr, "accepted a step that breaks a promise: %s (%s)\n", what, where.c_str());
  __builtin_trap();
}

void CheckPromises(const CustomAlgorithm& a) {
  Check(a.ranks >= 1 && static_cast<size_t>(a.ranks) == a.steps.size(), "rank count", a.source);
  Check(a.chunks >= 1 && a.channels >= 1, "chunks and channels", a.source);
  for (int r = 0; r < a.ranks; ++r) {
    const auto& steps = a.steps[static_cast<size_t>(r)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const CustomStep& s = steps[i];
      const bool sends = s.kind == CustomStepKind::kSend ||
                         s.kind == CustomStepKind::kRecvCopySend ||
                         s.kind == CustomStepKind::kRecvReduceSend;
      const bool recvs = s.kind != CustomStepKind::kSend;
      auto peer_ok = [&](int p) { return p >= 0 && p < a.ranks && p != r; };
      Check(!sends || peer_ok(s.send_peer), "send peer", s.where);
      Check(!recvs || peer_ok(s.recv_peer), "receive peer", s.where);
      Check(s.count >= 1 && uint64_t{s.chunk} + s.count <= static_cast<uint64_t>(a.chunks),
            "range outside the buffer", s.where);
      for (uint32_t d : s.deps) Check(d < i, "dependency on a later step", s.where);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::collective;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto parsed = genie::trace::ParseMscclXml(text, "algo.xml");
  if (!parsed.ok()) return 0;
  CheckPromises(*parsed);
  // `genie plan --custom algo.xml -n <ngpus>`: an all-reduce of 1 MiB over ranks 0..N-1.
  CollectiveSpec spec;
  spec.type = genie::CollectiveType::kAllReduce;
  spec.size = genie::Bytes{1} << 20;
  for (int r = 0; r < parsed->ranks; ++r) spec.group.push_back(r);
  spec.options.algorithms = {Algorithm::kCustom};
  spec.options.custom = std::make_shared<const CustomAlgorithm>(std::move(*parsed));
  auto all = PlanAll(spec);
  if (all.ok()) (void)CheckSchedules(spec, *all);
  return 0;
}
