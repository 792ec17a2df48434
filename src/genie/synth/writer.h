// The streaming per-rank writer behind `genie synth`: for each rank, runs the step emitter into
// an EtWriter (`<dir>/<prefix>.<rank>.et`, gzip on request) and closes the file before the next
// rank, so memory is one rank's writer per thread whatever the world size; then writes the
// comm-group file `<dir>/<prefix>.json`. `jobs` threads take ranks round-robin. Called from the
// main thread; returns when every file is closed.
#pragma once

#include <cstdint>
#include <string>

#include "genie/common/status.h"
#include "genie/synth/job.h"

namespace genie::synth {

struct WriteOptions {
  std::string dir;  // created if missing
  std::string prefix = "workload";
  bool gzip = false;
  int gzip_level = 1;  // fastest: the files are many, the CPU is the bottleneck
  int jobs = 1;        // writer threads
};

struct WriteReport {
  int ranks = 0;
  uint64_t nodes = 0;  // over all ranks
  std::string comm_group_path;
};

Result<WriteReport> WriteWorkload(const Job& job, const WriteOptions& options);

}  // namespace genie::synth
