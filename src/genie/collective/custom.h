// Custom: runs a custom algorithm (spec/custom_algorithm.h: MSCCL-IR or a Chakra custom
// collective, loaded once by whoever built the spec and handed over in PlanOptions::custom) as
// one phase — checks that it fits the collective, then cuts the phase's bytes into the
// algorithm's chunks and turns its steps into logical steps on them, keeping its own channels
// and dependencies (BuildCustom, declared with the other algorithms in phase.h). The planner
// never reads files. Internal to genie_collective; pure functions; any thread.
#pragma once

#include "genie/common/status.h"
#include "genie/spec/collective_type.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::collective::internal {

// Ok when `a` can run a `type` collective over `group_size` ranks and its steps are well
// formed (ranges inside its chunks, peers among its ranks, dependencies on earlier steps);
// errors name the algorithm's file and say what to change.
Status CheckCustomFits(const spec::CustomAlgorithm& a, CollectiveType type, int group_size);

}  // namespace genie::collective::internal
