// Plan: turns one collective call (CollectiveSpec) into this rank's Schedule — the
// point-to-point steps a real collective library would perform, shaped like ASTRA-sim's
// algorithms (chunks, phases, per-step message sizes) and like NCCL on the wire (channels,
// slices). Pure: no I/O (a custom algorithm arrives parsed, in PlanOptions::custom), no clock,
// no shared state; any thread.
#pragma once

#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"

namespace genie::collective {

// The schedule of the member with index `group_index` in spec.group.
Result<Schedule> Plan(const CollectiveSpec& spec, int group_index);

// Chunk `chunk` (0 <= chunk < options.chunks) alone: its phases and steps exactly as in
// Plan's schedule (same tags), with step indices counted from 0. Plan is the concatenation of
// PlanChunk over the chunks; a runner plans each chunk when it starts and drops it when it
// ends, so a rank holds only its running chunks' steps.
Result<Schedule> PlanChunk(const CollectiveSpec& spec, int group_index, int chunk);

// Every member's schedule, index = group index (for the checker, `genie plan`, tests).
Result<std::vector<Schedule>> PlanAll(const CollectiveSpec& spec);

// Bytes this schedule puts on the wire (every message it sends).
Bytes BytesSent(const Schedule& schedule);
// Number of messages it sends.
uint64_t MessagesSent(const Schedule& schedule);

}  // namespace genie::collective
