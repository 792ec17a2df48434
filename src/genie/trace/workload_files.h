// WorkloadFiles: which files make up a workload. A workload is the family of traces
// `<prefix>.<rank>.et` (optionally `.et.gz`) in one folder, ranks 0..N-1 with no gap, plus an
// optional comm-group JSON. The user names it by folder (which must hold exactly one family) or
// by `<prefix>` path (a rank file `<prefix>.0.et` is accepted too). Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::trace {

struct WorkloadFiles {
  std::string dir;                       // folder holding the traces
  std::string name;                      // prefix name without folder, e.g. "workload"
  std::vector<std::string> rank_paths;   // index = rank; ranks must be 0..N-1 with no gap
  std::string comm_group_path;           // "" when none given/found beside the traces
  int world_size() const { return static_cast<int>(rank_paths.size()); }
};

// arg: a folder (exactly one <prefix>.<rank>.et family inside, else an error listing them) or a
// <prefix> path; comm_group: explicit file ("" = auto-detect workload.json / comm_group.json).
Result<WorkloadFiles> FindWorkload(const std::string& arg, const std::string& comm_group = "");

// The comm-group file names looked for beside the traces, in order.
inline constexpr const char* kCommGroupFileNames[] = {"workload.json", "comm_group.json"};

}  // namespace genie::trace
