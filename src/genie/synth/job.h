// Job: one model on one layout on one GPU, resolved — conventions applied (rank order, gradient
// sync, sequence parallelism), divisibility checked, and the quantities every emitter needs
// computed once: tokens per micro-batch, which layers each pipeline stage holds, parameters per
// rank. Built once by Job::Make; immutable; any thread may read it (the writer's threads do).
#pragma once

#include <cstdint>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/synth/gpu.h"
#include "genie/synth/layout.h"
#include "genie/synth/model.h"

namespace genie::synth {

class Job {
 public:
  // Errors name the flag to change ("--tp 3 does not divide --heads 32").
  static Result<Job> Make(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu);

  const ModelSpec& model() const { return model_; }
  const Layout& layout() const { return layout_; }
  const GpuSpec& gpu() const { return gpu_; }
  const Placement& placement() const { return placement_; }
  int world() const { return placement_.world(); }
  int degree(Dim d) const { return layout_.degree(d); }
  bool stg() const { return model_.convention == Convention::kStg; }

  bool sequence_parallel() const { return sequence_parallel_; }
  GradSync grad_sync() const { return grad_sync_; }  // never kAuto
  int64_t bucket_elements() const { return bucket_elements_; }
  // The group gradients are synchronised over: dp (STG, which then all-reduces over sp on its
  // own), else data x sequence parallel.
  GroupKind grad_group() const;

  // Tokens of one micro-batch on one data-parallel replica (T), and the part of them one rank
  // of the sequence-parallel group holds (t = T / sp).
  int64_t replica_tokens() const { return replica_tokens_; }
  int64_t rank_tokens() const { return replica_tokens_ / layout_.sp; }

  // Layers [first, last) on pipeline stage `stage`; whether it holds the embeddings.
  int FirstLayer(int stage) const { return stage_first_[stage]; }
  int LastLayer(int stage) const { return stage_first_[stage + 1]; }
  bool HasInputEmbedding(int stage) const { return stage == input_embedding_stage_; }
  bool HasOutputEmbedding(int stage) const { return stage == output_embedding_stage_; }

  // Parameters (elements) one rank holds before ZeRO/FSDP sharding.
  int64_t LayerParams() const;
  int64_t EmbeddingParams() const;  // one of the input / output embeddings
  Bytes ElementBytes(int64_t elements) const {
    return static_cast<Bytes>(elements) * static_cast<Bytes>(model_.dtype_bytes);
  }

 private:
  Job(ModelSpec model, Layout layout, GpuSpec gpu, Placement placement)
      : model_(std::move(model)),
        layout_(std::move(layout)),
        gpu_(std::move(gpu)),
        placement_(std::move(placement)) {}

  ModelSpec model_;
  Layout layout_;
  GpuSpec gpu_;
  Placement placement_;
  bool sequence_parallel_ = true;
  GradSync grad_sync_ = GradSync::kPerStep;
  int64_t bucket_elements_ = 0;
  int64_t replica_tokens_ = 0;
  std::vector<int> stage_first_;  // pp + 1 entries
  int input_embedding_stage_ = 0, output_embedding_stage_ = 0;
};

}  // namespace genie::synth
