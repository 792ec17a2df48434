// libFuzzer target for `genie report`'s inputs: the input is one file the report reads — a
// run's results.json, `genie bench --json` or `genie doctor --json` — loaded as the CLI loads it
// (report/html/page_model.h LoadPanel: the kind detected from the content, then the run, bench
// or doctor panel), put into a page model with itself as a second panel, and rendered
// (report/html/html_page.h RenderPage). The model must stay script-safe JSON (ScriptSafeJson
// reads back as the same value, no '<' left). Any input must give a Status, never a crash,
// hang or sanitizer report.
//   build/fuzz/fuzz/report_inputs_fuzz -dict=fuzz/dicts/json.dict fuzz/corpus/report_inputs_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "genie/report/html/html_page.h"
#include "genie/report/html/page_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  genie::fuzz::MemFile file(data, size);
  if (!file.ok()) return 0;
  auto panel = genie::report::html::LoadPanel(file.path(), "javascript:alert(1)");
  if (!panel.ok()) return 0;
  std::vector<nlohmann::json> panels = {*panel, *panel};
  const nlohmann::json model = genie::report::html::PageModel(std::move(panels), "fuzz");
  const std::string safe = genie::report::html::ScriptSafeJson(model);
  if (safe.find('<') != std::string::npos) {
    std::fprintf(stderr, "the page model is not script-safe\n");
    std::abort();
  }
  (void)genie::report::html::RenderPage(model, "");
  return 0;
}
