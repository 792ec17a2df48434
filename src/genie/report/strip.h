// Stripping timing from results files so two runs of one workload compare equal with `diff`
// (`genie results strip`). Removed wherever they occur: times (start, end, finish, ts, dur,
// *_ns durations), bandwidths (algbw/busbw), and the per-run fields (time, hostname,
// command_line, merged_files). Objects under a "configs" or "transport" key are kept verbatim:
// they are the inputs, not measurements. Entries whose order could depend on timing are put in
// a canonical order (JSON-lines records, Chrome trace events; results JSON is already ordered
// by iteration, rank and node). Pure apart from reading the file; any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"

namespace genie::report {

const std::vector<std::string>& TimingKeys();

// A results JSON, a Chrome trace, or one JSON-lines record, with timings removed.
nlohmann::json StripTimings(const nlohmann::json& doc);

// The stripped text of a results JSON, a Chrome trace or a JSON-lines stream (detected from
// the content). A truncated last line of a stream is dropped; a file with no whole JSON value
// or record (a truncated single-line JSON) is Corruption, never an empty text.
Result<std::string> StripFileText(const std::string& path);
// The same from text already in memory; `name` stands for the file in error messages.
Result<std::string> StripText(std::string_view text, const std::string& name);

// Writes `text` (StripText's) to `out` through a temporary file renamed over it
// (report/atomic_file.h) once the text is checked to be what strip makes: one JSON value or
// JSON lines, not empty. `out` may be the input itself (--in-place): when the check or the
// write fails, it is left as it was. Errors name `out`.
Status WriteStripped(const std::string& out, const std::string& text);

}  // namespace genie::report
