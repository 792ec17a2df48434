// Reading back a Recorder's JSON-lines stream (recorder.h), e.g. after a crash or to merge the
// per-rank files of a run. A truncated last line (the process died mid-write) is dropped and
// flagged; damage anywhere else — a line that is not JSON, nests too deep, or a record with a
// missing, mistyped or out-of-range field (json_check.h) — is an error naming the file, the
// line and the field. Nothing throws. A stream without a header still reads (header stays
// null). Any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::record {

struct RecordStream {
  nlohmann::json header;  // the header line's "run" object; null when the file had none
  std::vector<OpEvent> ops;
  std::vector<RankSummary> ranks;
  nlohmann::json clock;    // the "clock" record (offset_ns to rank 0's clock), or null
  nlohmann::json traffic;  // the "traffic" record (bytes per peer), or null
  nlohmann::json testbed;  // the "testbed" record (rank 0 on a genie testbed), or null
  nlohmann::json localize; // the "localize" record (`genie run --localize`), or null
  // The "compute_faults" record: when each compute fault of --faults took effect on this rank
  // ({"rank", "events": [...]}, times on the rank's clock), or null.
  nlohmann::json compute_faults;
  // The "connections" record: the rank's connections as the network sees them, written once
  // connected ({"rank", "connections": [{"peer", "channel", "local", "remote"}]}), or null.
  nlohmann::json connections;
  bool truncated = false;  // the last line was incomplete and was dropped
};

Result<RecordStream> ReadRecordStream(const std::string& path);
// Checks the fields of a header's "run" object that readers rely on: rank, world_size,
// iterations and warmup, when present, are integers in range. Errors name `where`.
Status CheckRunHeader(const nlohmann::json& run, const std::string& where,
                      const std::string& remedy);
// The same from text already in memory; `name` is used in error messages.
Result<RecordStream> ParseRecordStream(std::string_view text, const std::string& name);

}  // namespace genie::record
