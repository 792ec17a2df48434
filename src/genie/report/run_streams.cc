#include "genie/report/run_streams.h"

#include <fmt/format.h>

#include "genie/record/run_folder.h"

namespace genie::report {

Result<RunStreams> FindRunStreams(const std::string& dir, int rank, int world_size,
                                  const std::string& run_id) {
  const std::string own = record::StreamPath(dir, rank);
  if (!record::IsStreamOfRun(own, run_id)) {
    return Status::NotFound(fmt::format(
        "{} is no longer this run's stream (the output folder was replaced, emptied or written "
        "into by another job while the run went on), so no results were written from it; if the "
        "folder was moved away, this run's streams went with it (genie results show "
        "MOVED_FOLDER); rerun with an output folder nothing else touches",
        own));
  }
  RunStreams out;
  if (rank != 0) {
    if (record::IsStreamOfRun(record::StreamPath(dir, 0), run_id)) return out;
    for (int r = rank - 1; r > 0; --r) {
      if (record::IsStreamOfRun(record::StreamPath(dir, r), run_id)) return out;
    }
  }
  out.writer = true;
  for (int r = rank; r < world_size; ++r) {
    const std::string path = record::StreamPath(dir, r);
    if (r == rank || record::IsStreamOfRun(path, run_id)) {
      out.ranks.push_back(r);
      out.paths.push_back(path);
    }
  }
  return out;
}

}  // namespace genie::report
