// Plan: what `genie plan` shows once its flags are a CollectiveSpec — every rank's schedule
// (collective/planner.h), checked symbolically (collective/schedule_checker.h) unless told not
// to, one rank's or every rank's steps when asked, and the messages and bytes each rank sends
// with their total. Nothing runs.
//
// Threading: the CLI's main thread.
#pragma once

#include "genie/collective/planner.h"

namespace genie::driver {

struct PlanShowOptions {
  bool check = true;       // run the symbolic checker
  int rank = -1;           // print this rank's steps (-1: none)
  bool all_steps = false;  // print every rank's steps
};

// Prints on stdout; errors on stderr as "genie plan: ...". Returns the exit code: 0, 1 when
// planning fails or the checker finds a fault, 2 when --rank is not in the group.
int ShowPlan(const collective::CollectiveSpec& spec, const PlanShowOptions& options);

}  // namespace genie::driver
