// MemoryTrace: one rank's synthesized trace, or the job's comm-group file, written into an
// anonymous in-memory file (memfd) instead of a folder, so that `genie simulate` can run a
// synth description without writing traces to disk. The file is readable by path
// ("/proc/self/fd/N") for as long as the MemoryTrace lives: open it (RankGraph::Open keeps its
// own descriptor), then drop the MemoryTrace. Owns the descriptor; one thread.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/synth/job.h"

namespace genie::synth {

class MemoryTrace {
 public:
  // Rank `rank`'s Chakra trace, as `genie synth` would write workload.<rank>.et.
  static Result<MemoryTrace> Rank(const Job& job, int rank);
  // The comm-group file, as `genie synth` writes workload.json.
  static Result<MemoryTrace> CommGroups(const Job& job);

  MemoryTrace(MemoryTrace&& other) noexcept : fd_(other.fd_), nodes_(other.nodes_) {
    other.fd_ = -1;
  }
  MemoryTrace& operator=(MemoryTrace&&) = delete;
  ~MemoryTrace();

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  uint64_t nodes() const { return nodes_; }
  uint64_t bytes() const;  // the file's size (memory it holds outside the process's RSS)

 private:
  explicit MemoryTrace(int fd) : fd_(fd) {}
  static Result<MemoryTrace> Create(const std::string& name);
  int fd_ = -1;
  uint64_t nodes_ = 0;
};

}  // namespace genie::synth
