// libFuzzer target for the readers behind `genie results show / merge / strip`. The input is one
// results file — a results JSON, a rank's JSON-lines stream or a Chrome trace — and goes through
// all three, as the CLI would take it:
//   show:  ParseResults (results_file.h: results JSON or stream, record_stream.h, event_json.h),
//          then what is missing from the run (completeness.h), the summary, traffic and
//          ASTRA-sim lines printed from the records;
//   strip: StripText (strip.h);
//   merge: the input cut at lines "---" into up to four rank streams (in-memory files), merged
//          by MergeStreams, written back as a results JSON and a Chrome trace; what merge writes
//          must read back with ParseResults.
// Any input must give a Status, never a crash, hang, leak or sanitizer report.
//   build/fuzz/fuzz/results_fuzz -dict=fuzz/dicts/json.dict fuzz/corpus/results_fuzz
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "genie/report/astra_sim_lines.h"
#include "genie/report/chrome_trace.h"
#include "genie/report/completeness.h"
#include "genie/report/results_file.h"
#include "genie/report/results_json.h"
#include "genie/report/strip.h"
#include "genie/report/summary.h"

namespace {

using genie::report::RunRecords;

// What `genie results show` prints from the records (into nowhere).
void Show(const RunRecords& r) {
  std::ostream null(nullptr);
  const genie::report::Completeness c =
      genie::report::CheckCompleteness(r.run_info, r.ops, r.ranks, r.truncated);
  (void)genie::report::DescribeCompleteness(c);
  (void)genie::report::CompletenessJson(c).dump();
  genie::report::PrintSummary(null, r.ops, r.ranks);
  const nlohmann::json* traffic = nullptr;
  if (r.run_info.is_object() && r.run_info.contains("traffic")) traffic = &r.run_info["traffic"];
  genie::report::PrintTraffic(null, traffic != nullptr ? *traffic : nlohmann::json());
  genie::report::PrintAstraSimLines(null, r.ranks);
}

// The input's parts between lines that are exactly "---" (at most four parts).
std::vector<std::string_view> Streams(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t at = 0; at <= text.size() && out.size() < 3;) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    if (text.substr(at, end - at) == "---") {
      out.push_back(text.substr(start, at - start));
      start = end == text.size() ? end : end + 1;
    }
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  out.push_back(text.substr(start));
  return out;
}

void Merge(std::string_view text) {
  std::vector<std::unique_ptr<genie::fuzz::MemFile>> files;
  std::vector<std::string> paths;
  for (std::string_view part : Streams(text)) {
    files.push_back(std::make_unique<genie::fuzz::MemFile>(
        reinterpret_cast<const uint8_t*>(part.data()), part.size()));
    if (!files.back()->ok()) return;
    paths.push_back(files.back()->path());
  }
  auto merged = genie::report::MergeStreams(paths);
  if (!merged.ok()) return;
  Show(*merged);
  const nlohmann::json doc = genie::report::BuildResultsJson(
      merged->run_info, merged->ops, merged->ranks, merged->clock_offsets_ns);
  const std::string written = doc.dump(1);
  (void)genie::report::BuildChromeTrace(merged->ops).dump();
  // `genie results show` must read what `genie results merge` wrote.
  auto back = genie::report::ParseResults(written, "merged.json");
  if (!back.ok()) {
    std::fprintf(stderr, "merge wrote a results JSON that does not read back: %s\n",
                 back.status().ToString().c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto records = genie::report::ParseResults(text, "fuzz.json");
  if (records.ok()) Show(*records);
  (void)genie::report::StripText(text, "fuzz.json");
  Merge(text);
  return 0;
}
