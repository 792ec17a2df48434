// The dense MLP: column-parallel up (and gate) projection, row-parallel down projection. With
// sequence parallelism: all-gather the input over TP, reduce-scatter the output; backward
// all-gathers dy, reduce-scatters dx and all-gathers the input again for the weight gradient.
// Without: one all-reduce each way.
#include "genie/synth/blocks.h"

namespace genie::synth {

namespace {

// One of the MLP's matmul groups on this rank's TP shard (forward, dx or dw: the same
// flops and bytes): weights once, the input and output activations, the ffn intermediates.
Id MlpMatmul(Program& p, std::string_view name, Program::Deps deps) {
  const Job& j = p.job();
  const ModelSpec& m = j.model();
  const double t = static_cast<double>(j.rank_tokens()), tp = j.degree(Dim::kTp);
  const double b = m.dtype_bytes, d = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn);
  return p.Compute(name, 2 * t * m.MlpParams() / tp,
                   b * (m.MlpParams() / tp + 2 * t * d + m.ffn_matrices * t * f / tp), deps);
}

}  // namespace

Id MlpForward(Program& p, Id x, Id weights) {
  const Job& j = p.job();
  const bool sp_tp = j.sequence_parallel();
  Id in = x;
  if (sp_tp) {
    in = Either(p.Collective(Family::kTp, "mlp.ag_x", CollectiveType::kAllGather,
                             ShardedActivation(j), GroupKind::kTp, {x}),
                x);
  }
  Id c = MlpMatmul(p, "mlp.fwd", {in, weights});
  Id r = p.Collective(Family::kTp, sp_tp ? "mlp.rs_out" : "mlp.ar_out",
                      sp_tp ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                      FullActivation(j), GroupKind::kTp, {c});
  return Either(r, c);
}

Id MlpBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads) {
  const Job& j = p.job();
  const bool sp_tp = j.sequence_parallel();
  Id g = dy;
  if (sp_tp) {
    g = Either(p.Collective(Family::kTp, "mlp.ag_dy", CollectiveType::kAllGather,
                            ShardedActivation(j), GroupKind::kTp, {dy}),
               dy);
  }
  Id dx = MlpMatmul(p, "mlp.dx", {g, weights});
  Id r = p.Collective(Family::kTp, sp_tp ? "mlp.rs_dx" : "mlp.ar_dx",
                      sp_tp ? CollectiveType::kReduceScatter : CollectiveType::kAllReduce,
                      FullActivation(j), GroupKind::kTp, {dx});
  Id x = 0;
  if (sp_tp) {
    x = p.Collective(Family::kTp, "mlp.ag_x_wgrad", CollectiveType::kAllGather,
                     ShardedActivation(j), GroupKind::kTp, {g});
  }
  Id dw = MlpMatmul(p, "mlp.dw", {g, x});
  wgrads->push_back(dw);
  return Either(r, dx);
}

}  // namespace genie::synth
