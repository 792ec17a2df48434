// The one rule every genie writer obeys before it creates or replaces a file (results.json,
// rank streams, Chrome traces, HTML reports, stripped and merged files, --json files): a
// command lists everything it will read and write in an OutputPlan and checks it once, before
// anything runs. An output is refused when
//  - it is one of the command's inputs (workload files, configs, --faults, a report's inputs),
//    compared by identity (device and inode) when the file exists and by its resolved path
//    (realpath of the folder) when it does not, so links, hard links and ../ are caught;
//  - two outputs name one file (a trace over the run's own results.json or rank stream);
//  - it is a folder or another non-regular file (a FIFO would block the writer);
//  - it would replace a results file or rank stream (results.json, rank-N.jsonl,
//    simulate.jsonl or any file that opens with a stream header) and is not itself that
//    results file or stream (a trace, report or CSV never replaces results);
//  - its folder is held by another job or simulation (record/run_folder.h's claim) — folders
//    the command holds itself are listed in own_folders.
// Also here: creating an output folder with errors that name the real cause (EROFS, EACCES).
// Pure apart from reading the file system; any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::record {

struct OutputPlan {
  std::vector<std::string> inputs;        // every file the command reads
  std::vector<std::string> results;       // results files and streams it writes (may replace
                                          // an earlier results file at the same place)
  std::vector<std::string> outputs;       // every other file it writes (traces, reports, CSV)
  std::vector<std::string> own_folders;   // folders whose claim this command holds
};

// Ok, or InvalidArgument naming the output, what it would destroy and what to do.
Status CheckOutputs(const OutputPlan& plan);

// True when `path` exists and is a genie results file or stream by name (results.json,
// rank-N.jsonl, simulate.jsonl) or by its first line (a genie-record stream header).
bool IsResultsFile(const std::string& path);

// `mkdir -p dir`: Ok when it exists (or was made) as a folder; otherwise IoError naming the
// folder that could not be made and the system's reason ("read-only file system: /mnt/ro").
Status MakeOutputFolder(const std::string& dir);

}  // namespace genie::record
