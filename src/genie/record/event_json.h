// The JSON form of OpEvent and RankSummary, shared by the per-rank JSON-lines stream
// (recorder.h) and the results JSON (report/results_json.h), so every genie results file reads
// back into the same structs. Communication fields are written only for communication ops.
// Pure functions; any thread.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::record {

nlohmann::json ToJson(const OpEvent& event);
nlohmann::json ToJson(const RankSummary& summary);

// Fast path for the per-op stream: appends ToJson(event) plus "record":"op" as one compact JSON
// object (no newline) to `out`, without building a JSON tree — the Recorder calls this on the
// rank's event loop for every op. Parses back to exactly ToJson(event) + {"record": "op"}.
void AppendOpRecord(const OpEvent& event, std::string* out);

// Errors name the missing or mistyped field; callers add the file and line.
Result<OpEvent> OpEventFromJson(const nlohmann::json& j);
Result<RankSummary> RankSummaryFromJson(const nlohmann::json& j);

}  // namespace genie::record
