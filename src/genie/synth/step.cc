#include "genie/synth/step.h"

#include <algorithm>
#include <string>

#include "genie/synth/blocks.h"

namespace genie::synth {
namespace {

// Point-to-point tags: unique per stage boundary, micro-batch and direction.
int64_t Tag(int boundary, int mb, int microbatches, bool backward) {
  return 1 + (int64_t{boundary} * microbatches + mb) * 2 + (backward ? 1 : 0);
}

class StepEmitter {
 public:
  StepEmitter(const Job& job, int rank, NodeSink* sink)
      : job_(job), p_(job, rank, sink), rank_(rank) {
    stage_ = job.placement().Coord(rank, Dim::kPp);
    stages_ = job.degree(Dim::kPp);
    first_ = job.FirstLayer(stage_);
    last_ = job.LastLayer(stage_);
    fsdp_ = job.layout().zero == 3;
    grad_group_ = job.grad_group();
  }

  Result<uint64_t> Run() {
    const int M = job_.layout().microbatches;
    Id previous = 0;
    int backward_done = 0;
    for (auto [forward, mb] : PipelineOrder(job_.layout().schedule, stage_, stages_, M)) {
      p_.set_after(previous);
      if (forward) {
        previous = Forward(mb);
      } else {
        ++backward_done;
        previous = Backward(mb, backward_done == M);
      }
    }
    p_.set_scope("");
    SyncEmbeddings();
    Optimizer(previous);
    GENIE_RETURN_IF_ERROR(p_.status());
    return p_.nodes();
  }

 private:
  void Scope(int mb, int layer = -1) {
    std::string s = "mb" + std::to_string(mb) + ".";
    if (layer >= 0) s += "L" + std::to_string(layer) + ".";
    p_.set_scope(std::move(s));
  }
  int Peer(int stage) const { return job_.placement().WithCoord(rank_, Dim::kPp, stage); }
  double B() const { return job_.model().dtype_bytes; }
  double T() const { return static_cast<double>(job_.rank_tokens()); }
  double HeadParams() const { return static_cast<double>(job_.EmbeddingParams()); }
  int64_t FsdpShard() const { return job_.LayerParams() / job_.placement().GroupSize(grad_group_); }

  Id Forward(int mb) {
    const int M = job_.layout().microbatches;
    const ModelSpec& m = job_.model();
    Scope(mb);
    Id x = 0;
    if (stage_ > 0) {
      x = p_.Recv("fwd.recv_act", Peer(stage_ - 1), ShardedActivation(job_),
                  Tag(stage_ - 1, mb, M, false), {});
    }
    if (job_.HasInputEmbedding(stage_)) {
      x = p_.Compute("embed.fwd", T() * m.hidden, B() * 2 * T() * m.hidden, {x});
    }
    for (int layer = first_; layer < last_; ++layer) {
      Scope(mb, layer);
      Id w = fsdp_ ? p_.Collective(Family::kFsdp, "w_ag", CollectiveType::kAllGather, FsdpShard(),
                                   grad_group_, {})
                   : 0;
      x = AttentionForward(p_, x, w);
      x = m.moe() ? MoeForward(p_, x, w) : MlpForward(p_, x, w);
    }
    Scope(mb);
    if (job_.HasOutputEmbedding(stage_)) {
      x = p_.Compute("head.fwd+loss", 2 * T() * HeadParams(),
                     B() * (HeadParams() + T() * m.vocab / job_.degree(Dim::kTp)), {x});
    }
    if (stage_ < stages_ - 1) {
      x = p_.Send("fwd.send_act", Peer(stage_ + 1), ShardedActivation(job_),
                  Tag(stage_, mb, M, false), {x});
    }
    return x;
  }

  Id Backward(int mb, bool last_microbatch) {
    const int M = job_.layout().microbatches;
    const ModelSpec& m = job_.model();
    Scope(mb);
    Id dy = 0;
    if (stage_ < stages_ - 1) {
      dy = p_.Recv("bwd.recv_grad", Peer(stage_ + 1), ShardedActivation(job_),
                   Tag(stage_, mb, M, true), {});
    }
    if (job_.HasOutputEmbedding(stage_)) {
      dy = p_.Compute("head.bwd", 4 * T() * HeadParams(),
                      B() * (2 * HeadParams() + T() * m.vocab / job_.degree(Dim::kTp)), {dy});
      if (last_microbatch) head_grad_ = dy;
    }
    for (int layer = last_ - 1; layer >= first_; --layer) {
      Scope(mb, layer);
      Id w = fsdp_ ? p_.Collective(Family::kFsdp, "w_ag_bwd", CollectiveType::kAllGather,
                                   FsdpShard(), grad_group_, {})
                   : 0;
      std::vector<Id> wgrads;
      dy = m.moe() ? MoeBackward(p_, dy, w, &wgrads) : MlpBackward(p_, dy, w, &wgrads);
      dy = AttentionBackward(p_, dy, w, &wgrads);
      SyncLayer(wgrads, last_microbatch);
    }
    Scope(mb);
    if (job_.HasInputEmbedding(stage_)) {
      dy = p_.Compute("embed.bwd", T() * m.hidden, B() * 2 * T() * m.hidden, {dy});
      if (last_microbatch) embed_grad_ = dy;
    }
    if (stage_ > 0) {
      dy = p_.Send("bwd.send_grad", Peer(stage_ - 1), ShardedActivation(job_),
                   Tag(stage_ - 1, mb, M, true), {dy});
    }
    if (last_microbatch) FlushBucket();
    return dy;
  }

  // Gradient sync of one layer after one micro-batch's backward.
  void SyncLayer(const std::vector<Id>& wgrads, bool last_microbatch) {
    const int64_t params = job_.LayerParams();
    if (fsdp_) {
      Id rs = p_.Collective(Family::kFsdp, "grad_rs", CollectiveType::kReduceScatter, params,
                            grad_group_, wgrads);
      if (job_.stg()) {  // STG: then all-reduce over the sequence-parallel group on its own
        rs = Either(p_.Collective(Family::kDp, "grad_ar_sp", CollectiveType::kAllReduce, params,
                                  GroupKind::kSp, {rs}),
                    rs);
      }
      if (rs) syncs_.push_back(rs);
      return;
    }
    if (job_.grad_sync() == GradSync::kPerMicrobatch) {
      CollectiveType type =
          job_.layout().zero == 0 ? CollectiveType::kAllReduce : CollectiveType::kReduceScatter;
      Id a = p_.Collective(Family::kDp, "grad_sync", type, params, grad_group_, wgrads);
      if (job_.stg()) {
        a = Either(p_.Collective(Family::kDp, "grad_ar_sp", CollectiveType::kAllReduce, params,
                                 GroupKind::kSp, {a}),
                   a);
      }
      if (a) syncs_.push_back(a);
      if (job_.layout().zero > 0 && last_microbatch) param_elements_.push_back(params);
      return;
    }
    if (!last_microbatch) return;
    bucket_elements_ += params;
    bucket_deps_.insert(bucket_deps_.end(), wgrads.begin(), wgrads.end());
    if (bucket_elements_ >= job_.bucket_elements()) FlushBucket();
  }

  void FlushBucket() {
    if (bucket_elements_ == 0) return;
    p_.set_scope("");
    CollectiveType type =
        job_.layout().zero == 0 ? CollectiveType::kAllReduce : CollectiveType::kReduceScatter;
    std::string name = "grad_bucket" + std::to_string(buckets_++);
    Id a = p_.Collective(Family::kDp, name, type, bucket_elements_, grad_group_, bucket_deps_);
    if (a) syncs_.push_back(a);
    if (job_.layout().zero > 0) param_elements_.push_back(bucket_elements_);
    bucket_elements_ = 0;
    bucket_deps_.clear();
  }

  // Embedding gradients, once per step. STG all-reduces the whole embedding over dp, then tp,
  // then sp (every dimension that shards its tokens); Megatron's vocabulary-parallel embedding
  // is synchronised over the gradient group like any other parameter.
  void SyncEmbeddings() {
    for (auto [grad, name] : {std::pair{embed_grad_, "embed"}, std::pair{head_grad_, "head"}}) {
      if (grad == 0) continue;
      const int64_t params = job_.EmbeddingParams();
      if (job_.stg()) {
        Id a = grad;
        for (GroupKind g : {GroupKind::kDp, GroupKind::kTp, GroupKind::kSp}) {
          a = Either(p_.Collective(Family::kDp, std::string(name) + ".grad_ar",
                                   CollectiveType::kAllReduce, params, g, {a}),
                     a);
        }
        if (a != grad) syncs_.push_back(a);
        continue;
      }
      CollectiveType type =
          job_.layout().zero == 0 ? CollectiveType::kAllReduce : CollectiveType::kReduceScatter;
      Id a = p_.Collective(Family::kDp, std::string(name) + ".grad_sync", type, params, grad_group_,
                           {grad});
      if (a) syncs_.push_back(a);
      if (job_.layout().zero > 0) param_elements_.push_back(params);
    }
  }

  // Adam: about 16 bytes of optimizer state traffic and 10 FLOPs per parameter this rank
  // updates; with ZeRO the updated shards are all-gathered afterwards.
  void Optimizer(Id previous) {
    const int64_t layers = last_ - first_;
    double params = static_cast<double>(layers * job_.LayerParams());
    if (job_.HasInputEmbedding(stage_)) params += job_.EmbeddingParams();
    if (job_.HasOutputEmbedding(stage_)) params += job_.EmbeddingParams();
    if (job_.layout().zero > 0) params /= job_.placement().GroupSize(grad_group_);
    std::vector<Id> deps = syncs_;
    deps.push_back(previous);
    Id opt = p_.Compute("optimizer", 10 * params, 16 * params, deps);
    if (job_.layout().zero == 1 || job_.layout().zero == 2) {
      int i = 0;
      for (int64_t elements : param_elements_) {
        p_.Collective(Family::kDp, "param_ag" + std::to_string(i++), CollectiveType::kAllGather,
                      elements / job_.placement().GroupSize(grad_group_), grad_group_, {opt});
      }
    }
  }

  const Job& job_;
  Program p_;
  int rank_;
  int stage_ = 0, stages_ = 1, first_ = 0, last_ = 0;
  bool fsdp_ = false;
  GroupKind grad_group_ = GroupKind::kDp;
  std::vector<Id> syncs_;
  std::vector<Id> bucket_deps_;
  int64_t bucket_elements_ = 0;
  int buckets_ = 0;
  std::vector<int64_t> param_elements_;
  Id embed_grad_ = 0, head_grad_ = 0;
};

}  // namespace

std::vector<std::pair<bool, int>> PipelineOrder(PipelineSchedule schedule, int stage, int stages,
                                                int microbatches) {
  std::vector<std::pair<bool, int>> order;
  const int M = microbatches;
  if (schedule == PipelineSchedule::kGPipe) {
    for (int m = 0; m < M; ++m) order.emplace_back(true, m);
    for (int m = 0; m < M; ++m) order.emplace_back(false, m);
    return order;
  }
  int warmup = std::min(stages - stage - 1, M);
  for (int m = 0; m < warmup; ++m) order.emplace_back(true, m);
  for (int i = 0; i < M - warmup; ++i) {
    order.emplace_back(true, warmup + i);
    order.emplace_back(false, i);
  }
  for (int m = M - warmup; m < M; ++m) order.emplace_back(false, m);
  return order;
}

Result<uint64_t> EmitRank(const Job& job, int rank, NodeSink* sink) {
  if (rank < 0 || rank >= job.world()) {
    return Status::InvalidArgument("rank " + std::to_string(rank) + " is outside 0.." +
                                   std::to_string(job.world() - 1));
  }
  return StepEmitter(job, rank, sink).Run();
}

}  // namespace genie::synth
