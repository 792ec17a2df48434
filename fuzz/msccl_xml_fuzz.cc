// libFuzzer target for MSCCL-IR XML custom algorithms (what MSCCLang, TACCL and TACOS emit; the
// *-implementation-custom files of a system.json). Whatever ParseMscclXml accepts must keep the
// promises the planner relies on — every peer another rank of the algorithm, every range inside
// the buffer's chunks, every dependency an earlier step of the same rank — and any input must
// give a Status, never a crash, hang, leak or sanitizer report.
//   build/fuzz/fuzz/msccl_xml_fuzz -dict=fuzz/dicts/msccl_xml.dict fuzz/corpus/msccl_xml_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fuzz_support.h"
#include "genie/collective/custom.h"

namespace {

void Check(bool ok, const char* what, const std::string& where) {
  if (ok) return;
  std::fprintf(stderr, "accepted a step that breaks a promise: %s (%s)\n", what, where.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::collective;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto algo = ParseMscclXml(text, "algo.xml");
  if (!algo.ok()) return 0;
  const CustomAlgorithm& a = *algo;
  Check(a.ranks >= 1 && static_cast<size_t>(a.ranks) == a.steps.size(), "rank count", a.source);
  Check(a.chunks >= 1 && a.channels >= 1, "chunks and channels", a.source);
  for (int r = 0; r < a.ranks; ++r) {
    const auto& steps = a.steps[static_cast<size_t>(r)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const CustomStep& s = steps[i];
      auto peer_ok = [&](int p) { return p == -1 || (p >= 0 && p < a.ranks && p != r); };
      Check(peer_ok(s.send_peer) && peer_ok(s.recv_peer), "peer", s.where);
      Check(s.send_peer >= 0 || s.recv_peer >= 0, "a step with no peer", s.where);
      Check(s.count >= 1 && uint64_t{s.chunk} + s.count <= static_cast<uint64_t>(a.chunks),
            "range outside the buffer", s.where);
      for (uint32_t d : s.deps) Check(d < i, "dependency on a later step", s.where);
    }
  }
  return 0;
}
