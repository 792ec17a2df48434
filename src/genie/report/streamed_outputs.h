// A run's results.json and Chrome trace written from its Recorder stream (record/recorder.h:
// one JSON line per op, in the order the ops finished) instead of from ops held in memory, so
// that a simulation of thousands of ranks never holds every op of every rank: the stream is read
// once, the per-type table and completeness are accumulated, and the two orderings the files
// need — results by (iteration, rank, node), the trace by (rank, track, start) — come from
// external sorts (external_sort.h) in bounded memory. The text is byte for byte what
// WriteResultsJson / WriteChromeTrace write for the same ops. The stream itself survives a run
// stopped part-way (each line is written as the op finishes; a cut last line is dropped), and
// this can be run on what is there.
// Reads and writes files; any thread.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/record/rank_summary.h"

namespace genie::report {

struct StreamedOutputs {
  std::string results_path;  // "" = none
  std::string trace_path;    // "" = none
  std::string scratch_dir;   // where the sorts spill ("" = the results' or the trace's folder)
  size_t memory_bytes = 32u << 20;  // for both sorts together
};

struct StreamedOutputsStats {
  uint64_t ops = 0;         // op records read
  size_t spilled_runs = 0;  // sorted runs written to scratch files (0: sorted in memory)
  bool truncated = false;   // the stream's last line was cut and dropped
};

// run_info and ranks as for WriteResultsJson (ranks are small: one per rank and iteration).
Result<StreamedOutputsStats> WriteStreamedOutputs(const std::string& stream_path,
                                                  const nlohmann::json& run_info,
                                                  const std::vector<record::RankSummary>& ranks,
                                                  const StreamedOutputs& out);

}  // namespace genie::report
