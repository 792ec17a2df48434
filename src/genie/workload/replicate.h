// Replicate: `genie gen replicate W --copies K -o OUT` writes K independent copies of workload
// W side by side as one workload of K x N ranks, to simulate a cluster of jobs (or a job too
// large to trace) from a small trace. Copy k's rank r is rank k*N + r; point-to-point peers
// move with it; every comm group g of W becomes a group of copy k with id k*S + g (S = the
// largest group id + 2), and collectives on the world group (no pg_name, "", or an undefined
// group 0) use copy k's own world, group k*S + S-1. The copies never talk to each other, so
// each copy's per-rank figures equal W's (on a network that treats them alike). Writes
// OUT.<rank>.et and the comm-group file workload.json beside them. Pure file I/O; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie::workload {

struct ReplicateOptions {
  std::string input;       // workload folder or <prefix> (trace::FindWorkload)
  std::string comm_group;  // "" = the one found beside the traces
  int copies = 2;
  std::string output;  // prefix path: files are <output>.<rank>.et
  bool gzip = false;
};

// Returns the number of ranks written (copies x N).
Result<int> Replicate(const ReplicateOptions& options);

}  // namespace genie::workload
