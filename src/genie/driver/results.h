// Results: `genie results show | strip | merge` — read, compare and combine genie's results
// files (results JSON, per-rank JSON-lines streams, Chrome traces; docs/results.md). `show`
// prints what `genie run` printed at its end (PrintRunResults, run_results.h: one
// implementation for both), the prediction or baseline the run recorded beside it and its
// link probes judged again.
//
// Exit codes (docs/results.md): 2 for bad input — a file that cannot be read or is not a valid
// genie results file, an output that would overwrite an input — and 1 when an output cannot be
// written (disk full, no permission). Errors go to stderr as "genie results: ...".
//
// Threading: the process's main thread.
#pragma once

#include <string>
#include <vector>

namespace genie::driver {

struct ResultsShowOptions {
  std::vector<std::string> files;  // one results JSON, or rank streams / folders (merged)
  bool astra_sim = false;          // also ASTRA-sim's per-rank lines
};
int ShowResults(const ResultsShowOptions& options);

struct ResultsStripOptions {
  std::vector<std::string> files;
  bool to_stdout = false;  // print instead of writing files
  bool in_place = false;
  std::string dir;  // "" = beside each file
};
// FILE -> FILE.stripped.EXT (or in place, or on stdout); every file is read before any is
// written, and an output naming an input is refused.
int StripResults(const ResultsStripOptions& options);

struct ResultsMergeOptions {
  std::string out;                         // results JSON to write
  std::vector<std::string> files;          // rank streams or folders of them
  std::string trace_out;                   // "" = OUT's name with .trace.json
  std::vector<std::string> clock_offsets;  // "RANK=NS", as given
};
int MergeResults(const ResultsMergeOptions& options);

// run.json -> run.stripped.json, rank0.jsonl -> rank0.stripped.jsonl (beside it, or in `dir`).
std::string StrippedPath(const std::string& path, const std::string& dir);

}  // namespace genie::driver
