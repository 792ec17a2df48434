// libFuzzer target for comm-group files (trace/comm_groups.h): `--comm-group FILE` and the
// workload.json beside generated traces, {"<group id>": [ranks...]}. What parses is used as the
// executor uses it: every group resolved against a few world sizes, and pg_name strings (the
// keys themselves) normalised. Any input must give a Status, never a crash, hang, leak or
// sanitizer report.
//   build/fuzz/fuzz/comm_groups_fuzz -dict=fuzz/dicts/json.dict fuzz/corpus/comm_groups_fuzz
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_support.h"
#include "genie/trace/comm_groups.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using genie::trace::CommGroups;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto groups = CommGroups::Parse(text, "workload.json");
  if (!groups.ok()) {
    // Short inputs double as pg_name strings, which come from the traces.
    if (size < 64) (void)genie::trace::ParsePgName(text);
    return 0;
  }
  for (const auto& [id, members] : groups->all()) {
    if (members.empty()) __builtin_trap();  // Parse refuses empty groups
    for (int world : {1, 8, 1 << 16}) (void)groups->Resolve(id, world);
  }
  for (int world : {1, 8}) {
    (void)groups->Resolve(genie::trace::kWorldGroupId, world);
    (void)groups->Resolve(0, world);
  }
  return 0;
}
