// Finding a run's results at its end: after the final barrier every rank's stream is complete,
// and each output folder's lowest rank with a stream of this run (its "writer") merges the
// folder's streams of this run into results.json — rank 0 when the folder is shared, or one
// rank per host otherwise. Streams are matched by run id (record/run_folder.h), so an earlier
// run's leftovers in the folder are skipped. Reads files; any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::report {

struct RunStreams {
  bool writer = false;             // `rank` merges and writes this folder's results
  std::vector<int> ranks;          // writer only: the ranks whose streams of this run are here
  std::vector<std::string> paths;  // their stream files, in rank order
};

// Looks at `rank`'s own stream first: when it is no longer this run's (the folder was replaced,
// emptied or overwritten while the run went on) that is an error (NotFound) naming the file.
// Otherwise a rank other than 0 looks at rank 0's stream and then downwards from its own rank, so
// most ranks of a large job open two or three files; the writer then lists the folder's streams of
// this run (never empty: its own is one).
Result<RunStreams> FindRunStreams(const std::string& dir, int rank, int world_size,
                                  const std::string& run_id);

}  // namespace genie::report
