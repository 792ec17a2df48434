#include "genie/synth/job.h"

#include <algorithm>
#include <string>

namespace genie::synth {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

}  // namespace

Result<Job> Job::Make(const ModelSpec& model, const Layout& layout, const GpuSpec& gpu) {
  GENIE_RETURN_IF_ERROR(Validate(model));
  const Layout& l = layout;
  for (int i = 0; i < kNumDims; ++i) {
    Dim d = static_cast<Dim>(i);
    if (l.degree(d) < 1) {
      return Status::InvalidArgument(std::string("--") + DimName(d) + " must be at least 1");
    }
  }
  int64_t world = int64_t{l.dp} * l.tp * l.pp * l.sp * l.ep;
  if (world > (1 << 22)) return Status::InvalidArgument("more than 4,194,304 ranks");
  if (l.microbatches < 1) return Status::InvalidArgument("--microbatches must be at least 1");
  if (l.zero < 0 || l.zero > 3) return Status::InvalidArgument("--zero must be 0, 1, 2 or 3");
  if (gpu.peak_flops <= 0 || gpu.mem_bytes_per_s <= 0) {
    return Status::InvalidArgument("GPU '" + gpu.name + "': peak FLOP/s and bandwidth must be > 0");
  }
  auto divides = [](int64_t a, int64_t b) { return b % a == 0; };
  int64_t step_tokens = model.global_batch * model.seq;
  if (!divides(int64_t{l.dp} * l.microbatches, step_tokens)) {
    return Status::InvalidArgument("--dp " + Num(l.dp) + " x --microbatches " +
                                   Num(l.microbatches) + " must divide the step's tokens (" +
                                   Num(step_tokens) + " = --global-batch x --seq)");
  }
  int64_t replica_tokens = step_tokens / (int64_t{l.dp} * l.microbatches);
  GENIE_RETURN_IF_ERROR(CheckSizes(model, replica_tokens));
  if (!divides(int64_t{l.sp} * l.tp, replica_tokens)) {
    return Status::InvalidArgument("--sp x --tp (" + Num(int64_t{l.sp} * l.tp) +
                                   ") must divide the tokens of a micro-batch (" +
                                   Num(replica_tokens) +
                                   "): change --global-batch or --microbatches");
  }
  if (!divides(l.tp, model.heads) || !divides(l.tp, model.ffn) || !divides(l.tp, model.hidden)) {
    return Status::InvalidArgument("--tp " + Num(l.tp) + " must divide --heads " +
                                   Num(model.heads) + ", --hidden and --ffn");
  }
  if (model.moe()) {
    if (!divides(l.ep, model.experts) || !divides(l.ep, model.hidden)) {
      return Status::InvalidArgument("--ep " + Num(l.ep) + " must divide --experts " +
                                     Num(model.experts) + " and --hidden");
    }
    if (!divides(l.tp, model.expert_width())) {
      return Status::InvalidArgument("--tp must divide the expert width");
    }
  } else if (l.ep > 1) {
    return Status::InvalidArgument("--ep " + Num(l.ep) + " needs an MoE model (--experts)");
  }
  if (l.pp > model.layers) {
    return Status::InvalidArgument("--pp " + Num(l.pp) + " is more than --layers " +
                                   Num(model.layers));
  }
  bool stg = model.convention == Convention::kStg;
  std::vector<Dim> order = l.order;
  if (order.empty()) {
    order = stg ? std::vector<Dim>{Dim::kDp, Dim::kTp, Dim::kSp, Dim::kEp, Dim::kPp}
                : std::vector<Dim>{Dim::kTp, Dim::kSp, Dim::kEp, Dim::kDp, Dim::kPp};
  }
  Job job(model, layout, gpu, Placement(layout, order));
  job.sequence_parallel_ = l.sequence_parallel != 0;
  job.grad_sync_ = l.grad_sync != GradSync::kAuto
                       ? l.grad_sync
                       : (stg ? GradSync::kPerMicrobatch : GradSync::kPerStep);
  job.bucket_elements_ =
      l.bucket_bytes > 0
          ? std::max<int64_t>(1, static_cast<int64_t>(l.bucket_bytes) / model.dtype_bytes)
          : 40'000'000;
  job.replica_tokens_ = replica_tokens;
  // Stages. STG counts the two embeddings as layers: position p (0 = input embedding, 1..L the
  // layers, L + 1 the output embedding) goes to stage p / ((L + 2) / pp) (capped at pp - 1;
  // STG wraps around instead). Megatron splits the layers evenly, the first stages taking the
  // remainder, embeddings on the first and last stage.
  int L = model.layers, P = l.pp;
  job.stage_first_.assign(P + 1, L);
  if (stg) {
    int per = std::max(1, (L + 2) / P);
    auto stage_of = [&](int position) { return std::min(position / per, P - 1); };
    for (int s = 0; s < P; ++s) {
      int first = L;
      for (int layer = 0; layer < L; ++layer) {
        if (stage_of(layer + 1) >= s) {
          first = layer;
          break;
        }
      }
      job.stage_first_[s] = first;
    }
    job.stage_first_[P] = L;
    job.input_embedding_stage_ = 0;
    job.output_embedding_stage_ = stage_of(L + 1);
  } else {
    int first = 0;
    for (int s = 0; s < P; ++s) {
      job.stage_first_[s] = first;
      first += L / P + (s < L % P ? 1 : 0);
    }
    job.stage_first_[P] = L;
    job.input_embedding_stage_ = 0;
    job.output_embedding_stage_ = P - 1;
  }
  return job;
}

GroupKind Job::grad_group() const {
  if (stg() || layout_.sp == 1) return GroupKind::kDp;
  if (layout_.dp == 1) return GroupKind::kSp;
  return GroupKind::kDpSp;
}

int64_t Job::LayerParams() const {
  const ModelSpec& m = model_;
  int64_t tp = layout_.tp, ep = layout_.ep;
  int64_t params = m.AttentionParams() / tp;
  if (m.moe()) {
    params += (m.experts / ep) * m.ExpertParams() / tp;
    params += m.shared_experts * m.ExpertParams() / tp;
    params += m.RouterParams() / ep;
  } else {
    params += m.MlpParams() / tp;
  }
  return params;
}

int64_t Job::EmbeddingParams() const {
  // STG keeps the embedding whole on every rank; Megatron splits the vocabulary over TP.
  if (stg()) return model_.EmbeddingParams();
  return (model_.vocab + layout_.tp - 1) / layout_.tp * model_.hidden;
}

}  // namespace genie::synth
