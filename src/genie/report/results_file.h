// Reading results back: a results JSON (results_json.h) or a rank's JSON-lines stream
// (record/recorder.h), and merging the per-rank streams of a run into one set of records
// (`genie results show` / `genie results merge`). Clock offsets (rank -> ns added to every time
// of that rank) let a multi-host run put all ranks on one clock; the offsets applied are kept
// in the records so the results JSON can say what was done. Reads files; any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

struct RunRecords {
  nlohmann::json run_info;  // a results JSON's provenance, or a stream's header
  std::vector<record::OpEvent> ops;  // from a results JSON: its communication ops only
  std::vector<record::RankSummary> ranks;
  nlohmann::json clock_offsets_ns = nlohmann::json::object();
  bool truncated = false;  // a stream's last line was incomplete
};

// Detects the format from the content.
Result<RunRecords> LoadResults(const std::string& path);
// The same from text already in memory; `name` stands for the file in error messages.
Result<RunRecords> ParseResults(std::string_view text, const std::string& name);

// Merges JSON-lines streams (one per rank, or any split of ranks); a rank found in two files is
// an error. A path that is a directory stands for the rank-*.jsonl streams in it (one host's
// output folder). Each rank's times move onto rank 0's clock by the offset given here or,
// failing that, by its machine's: among the ranks whose clock records name the same machine
// (boot id), the offset measured with the smallest round trip. run_info becomes
// {"merged_files": [file names], "headers": [each file's header], "traffic": [each rank's]}.
Result<RunRecords> MergeStreams(const std::vector<std::string>& paths,
                                const std::map<int, TimeNs>& clock_offsets_ns = {});
// The rank streams a path stands for: itself, or a directory's rank-*.jsonl in rank order.
Result<std::vector<std::string>> ExpandStreamPaths(const std::vector<std::string>& paths);

}  // namespace genie::report
