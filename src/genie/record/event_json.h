// The JSON form of OpEvent and RankSummary, shared by the per-rank JSON-lines stream
// (recorder.h) and the results JSON (report/results_json.h), so every genie results file reads
// back into the same structs. Communication fields are written only for communication ops.
// Pure functions; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

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
// The same for a rank's iteration summary: ToJson(summary) + {"record": "rank"}.
void AppendRankRecord(const RankSummary& summary, std::string* out);

// Reading back, checked field by field (json_check.h): errors name `where` (the file and the
// line or entry), the missing, mistyped or out-of-range field, and end in `remedy`. Timing fields
// may be absent (files stripped by `genie results strip` still read back); "kind" and "rank"
// (ops), "rank" and "iteration" (rank records) may not.
Result<OpEvent> OpEventFromJson(const nlohmann::json& j, const std::string& where = "",
                                const std::string& remedy = "");
Result<RankSummary> RankSummaryFromJson(const nlohmann::json& j, const std::string& where = "",
                                        const std::string& remedy = "");
// The auxiliary records of a real run, checked for the fields and types their readers use:
// "traffic" (peers[] with byte and message counts) and "clock" (run_id, host_id, offset_ns,
// rtt_ns).
Status CheckTrafficRecord(const nlohmann::json& j, const std::string& where = "",
                          const std::string& remedy = "");
Status CheckClockRecord(const nlohmann::json& j, const std::string& where = "",
                        const std::string& remedy = "");

}  // namespace genie::record
