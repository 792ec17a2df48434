// Attention: QKV projection, the attention kernel, the output projection. Tensor parallel
// splits heads (column-parallel QKV, row-parallel output); with sequence parallelism the input
// is all-gathered over TP before QKV and the output reduce-scattered after it (without: one
// all-reduce), and backward mirrors that plus a second all-gather of the input for the weight
// gradient (Megatron does not keep the gathered input). Sequence/context parallel (sp) ranks
// each hold t = T/sp tokens and all-gather K and V over the sp group; backward reduce-scatters
// dK and dV.
#include "genie/synth/blocks.h"

namespace genie::synth {
namespace {

double B(const Job& j) { return j.model().dtype_bytes; }

}  // namespace

int64_t FullActivation(const Job& job) { return job.rank_tokens() * job.model().hidden; }

int64_t ShardedActivation(const Job& job) {
  return job.sequence_parallel() ? FullActivation(job) / job.degree(Dim::kTp) : FullActivation(job);
}

Id AttentionForward(Program& p, Id x, Id weights) {
  const Job& j = p.job();
  const ModelSpec& m = j.model();
  const double t = static_cast<double>(j.rank_tokens()), tp = j.degree(Dim::kTp);
  const double d = static_cast<double>(m.hidden), kv = static_cast<double>(m.kv_dim());
  const bool sp_tp = j.sequence_parallel();
  Id in = x;
  if (sp_tp) {
    in = Either(p.Collective(Family::kTp, "attn.ag_x", CollectiveType::kAllGather,
                             ShardedActivation(j), GroupKind::kTp, {x}),
                x);
  }
  Id qkv = p.Compute("attn.qkv", 2 * t * m.QkvParams() / tp,
                     B(j) * (m.QkvParams() / tp + t * d + t * (d + 2 * kv) / tp), {in, weights});
  int64_t kv_elems = j.rank_tokens() * m.kv_dim() / j.degree(Dim::kTp);
  Id k = p.Collective(Family::kSp, "attn.ag_k", CollectiveType::kAllGather, kv_elems,
                      GroupKind::kSp, {qkv});
  Id v = p.Collective(Family::kSp, "attn.ag_v", CollectiveType::kAllGather, kv_elems,
                      GroupKind::kSp, {qkv});
  // Causal attention: t queries against the whole sequence, half of it masked.
  const double ctx = static_cast<double>(m.seq);
  Id core = p.Compute("attn.core", 2 * t * ctx * d / tp,
                      B(j) * (t * d * 3 / tp + ctx * 2 * kv / tp), {qkv, k, v});
  Id o = p.Compute("attn.out", 2 * t * m.OutProjParams() / tp,
                   B(j) * (m.OutProjParams() / tp + t * d / tp + t * d), {core});
  Id r = p.Collective(Family::kTp, sp_tp ? "attn.rs_out" : "attn.ar_out",
                      sp_tp ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                      FullActivation(j), GroupKind::kTp, {o});
  return Either(r, o);
}

Id AttentionBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads) {
  const Job& j = p.job();
  const ModelSpec& m = j.model();
  const double t = static_cast<double>(j.rank_tokens()), tp = j.degree(Dim::kTp);
  const double d = static_cast<double>(m.hidden), kv = static_cast<double>(m.kv_dim());
  const bool sp_tp = j.sequence_parallel();
  Id g = dy;
  if (sp_tp) {
    g = Either(p.Collective(Family::kTp, "attn.ag_dy", CollectiveType::kAllGather,
                            ShardedActivation(j), GroupKind::kTp, {dy}),
               dy);
  }
  const double ctx = static_cast<double>(m.seq);
  Id dcore =
      p.Compute("attn.out_dx+core_bwd", 2 * t * m.OutProjParams() / tp + 4 * t * ctx * d / tp,
                B(j) * (m.OutProjParams() / tp + 4 * t * d / tp + ctx * 2 * kv / tp), {g, weights});
  // dK, dV for the whole sequence, reduce-scattered back to the ranks that own the tokens.
  // STG sizes them with all query heads; Megatron with the KV heads.
  int64_t dkv = j.replica_tokens() * (j.stg() ? m.hidden : m.kv_dim()) / j.degree(Dim::kTp);
  Id dk = p.Collective(Family::kSp, "attn.rs_dk", CollectiveType::kReduceScatter, dkv,
                       GroupKind::kSp, {dcore});
  Id dv = p.Collective(Family::kSp, "attn.rs_dv", CollectiveType::kReduceScatter, dkv,
                       GroupKind::kSp, {dcore});
  Id dx = p.Compute("attn.qkv_dx", 2 * t * m.QkvParams() / tp,
                    B(j) * (m.QkvParams() / tp + t * (d + 2 * kv) / tp + t * d), {dcore, dk, dv});
  Id r = p.Collective(Family::kTp, sp_tp ? "attn.rs_dx" : "attn.ar_dx",
                      sp_tp ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                      FullActivation(j), GroupKind::kTp, {dx});
  Id x = 0;
  if (sp_tp) {
    x = p.Collective(Family::kTp, "attn.ag_x_wgrad", CollectiveType::kAllGather,
                     ShardedActivation(j), GroupKind::kTp, {g});
  }
  Id dw = p.Compute("attn.dw", 2 * t * m.AttentionParams() / tp,
                    B(j) * (m.AttentionParams() / tp + 3 * t * d), {dcore, x});
  wgrads->push_back(dw);
  return Either(r, dx);
}

}  // namespace genie::synth
