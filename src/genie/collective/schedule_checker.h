// CheckSchedules: runs every rank's schedule of one collective symbolically, before anything
// touches a socket. It proves that every send meets exactly one receive (same peer pair, tag,
// size and channel), that nothing deadlocks, that steps which may run at the same time never
// race on the same bytes, and that each rank's buffer finally holds exactly the contributions
// BufferLayout promises (it tracks which ranks' data every byte range holds). Pure; any thread.
#pragma once

#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"

namespace genie::collective {

struct CheckOptions {
  // Race detection compares every pair of steps in a phase; phases longer than this skip it.
  size_t max_race_steps = 16384;
};

// all_ranks[i] must be the schedule of spec.group[i].
Status CheckSchedules(const CollectiveSpec& spec, const std::vector<Schedule>& all_ranks,
                      const CheckOptions& options = {});

}  // namespace genie::collective
