// File-descriptor budget of a rank process. Every connection is a descriptor; a rank of a big
// job may need more than the soft RLIMIT_NOFILE a shell hands out (often 1,024). At start the
// soft limit is raised to the hard one (RaiseFdLimit); before connecting, the count a rank's
// connections need is checked against it (CheckFdBudget), so that a job that still does not
// fit fails at once, naming the limit, the count and the fix — not with EMFILE halfway
// through connecting. Process-wide; call from the main thread before the loop runs.
#pragma once

#include <cstdint>

#include "genie/common/status.h"

namespace genie::net {

struct FdLimit {
  uint64_t soft = 0;  // after raising
  uint64_t hard = 0;
};

// Raises the soft RLIMIT_NOFILE to the hard limit (never lowers it); returns both.
FdLimit RaiseFdLimit();

// Descriptors a rank holds besides its connections: loop, timers, listening sockets, result
// files, the rendezvous, stdio — with room to spare.
inline constexpr uint64_t kFdReserve = 64;

// OK when `connections` (plus kFdReserve) fit under the soft limit; else InvalidArgument
// naming the rank, the limit, the count needed and the fix (ulimit -n, fewer --channels).
Status CheckFdBudget(int rank, uint64_t connections, int channels);

}  // namespace genie::net
