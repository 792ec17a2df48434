// Fuzzes the planner against its own checker: any collective, algorithm, group size (1..24),
// size, chunk/channel/slice setting and topology that Plan accepts must pass CheckSchedules.
// A plan error is fine (unsupported pairs); a schedule the checker rejects is a planner bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"

namespace {

struct Reader {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint32_t Next(uint32_t mod) {
    uint32_t v = 0;
    for (int i = 0; i < 2; ++i) v = (v << 8) | (at < size ? data[at++] : 0);
    return mod ? v % mod : v;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace genie::collective;
  Reader in{data, size};
  CollectiveSpec spec;
  spec.type = static_cast<genie::CollectiveType>(in.Next(10));
  const int n = 1 + static_cast<int>(in.Next(24));
  // A scrambled, non-contiguous group.
  const int stride = 1 + static_cast<int>(in.Next(5));
  for (int i = 0; i < n; ++i) spec.group.push_back(((i * 7) % n) * stride + 3);
  spec.size = in.Next(0) * (1 + in.Next(64));
  spec.root = static_cast<int>(in.Next(static_cast<uint32_t>(n)));
  PlanOptions& o = spec.options;
  o.algorithms = {static_cast<Algorithm>(in.Next(9))};  // every algorithm but custom
  o.direct_window = static_cast<int>(in.Next(4));
  o.chunks = 1 + static_cast<int>(in.Next(4));
  o.channels = 1 + static_cast<int>(in.Next(4));
  // Slices no smaller than 1/64 of the buffer keep each run small.
  o.slice_bytes = in.Next(3) == 0 ? 0 : spec.size / 64 + 1 + in.Next(50000);
  if (in.Next(2) == 1 && n % 2 == 0 && n > 2) {
    o.dims = {2, n / 2};
    o.optimization = in.Next(2) ? Optimization::kLocalBwAware : Optimization::kBaseline;
    o.algorithms = {static_cast<Algorithm>(in.Next(3)), static_cast<Algorithm>(in.Next(4))};
    if (in.Next(3) == 0) o.involved_dim = {in.Next(2) == 1, in.Next(2) == 1};
  }
  auto all = PlanAll(spec);
  if (!all.ok()) return 0;
  const genie::Status st = CheckSchedules(spec, *all);
  if (!st.ok()) {
    std::fprintf(stderr, "planner bug: %s\n", st.ToString().c_str());
    std::abort();
  }
  return 0;
}
