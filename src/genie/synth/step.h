// The step emitter: one rank's whole training step — its pipeline stage's micro-batches in the
// schedule's order (1F1B or GPipe; SEND/RECV of activations and gradients between stages),
// each layer's blocks (blocks.h), FSDP parameter all-gathers, gradient synchronisation (per
// micro-batch and layer as the STG generator does, or per step in buckets that overlap the last
// micro-batch's backward as Megatron's DDP does), the embeddings' gradient sync and the
// optimizer. Pure: nodes go to the sink; called by the writer, any thread, one call per rank.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "genie/common/status.h"
#include "genie/synth/job.h"
#include "genie/synth/program.h"

namespace genie::synth {

// Writes rank `rank`'s graph to `sink`; returns the number of nodes.
Result<uint64_t> EmitRank(const Job& job, int rank, NodeSink* sink);

// The order stage `stage` of `stages` runs its micro-batches: (forward?, micro-batch) pairs.
std::vector<std::pair<bool, int>> PipelineOrder(PipelineSchedule schedule, int stage, int stages,
                                                int microbatches);

}  // namespace genie::synth
