// The per-family emitters of one transformer layer for one micro-batch: attention (tensor and
// sequence/context parallel), the dense MLP (tensor parallel) and the MoE layer (expert
// parallel). Each emits its compute nodes and the collectives Megatron-LM issues around them
// (docs/synth.md, "What each dimension emits"), on the Program's rank, and returns the node
// the next block depends on. Backward emitters also return the weight-gradient nodes the
// gradient synchronisation waits for. `weights` is the FSDP all-gather (0 without FSDP).
// Called by the step emitter only; the Program's thread.
#pragma once

#include <vector>

#include "genie/synth/program.h"

namespace genie::synth {

using Id = Program::Id;

Id AttentionForward(Program& p, Id x, Id weights);
Id AttentionBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads);
Id MlpForward(Program& p, Id x, Id weights);
Id MlpBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads);
Id MoeForward(Program& p, Id x, Id weights);
Id MoeBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads);

// Elements of one activation tensor that crosses a TP boundary or a pipeline stage: the
// rank's tokens x hidden, divided by tp when it is sequence-sharded (Megatron SP).
int64_t ShardedActivation(const Job& job);
int64_t FullActivation(const Job& job);  // t x hidden

inline Id Either(Id a, Id b) { return a != 0 ? a : b; }

}  // namespace genie::synth
