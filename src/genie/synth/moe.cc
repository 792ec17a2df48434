// The MoE layer with expert parallelism. The ep ranks of a group hold the same micro-batch (the
// attention before it is replicated over them, as in the STG generator); each holds
// experts / ep experts and the hidden dimension of the residual stream split ep ways. Forward:
// the router weight is all-gathered over EP, tokens x top_k are dispatched and combined with an
// all-to-all each (t * top_k * hidden / (ep * tp) elements), and the output all-gathered over EP
// back to full width. Backward mirrors it: all-gather dy, two all-to-alls.
#include "genie/synth/blocks.h"

namespace genie::synth {
namespace {

struct MoeSizes {
  double t, tp, ep, b, d;
  int64_t a2a, out, router;
};

MoeSizes Sizes(const Job& j) {
  const ModelSpec& m = j.model();
  MoeSizes s;
  s.t = static_cast<double>(j.rank_tokens());
  s.tp = j.degree(Dim::kTp);
  s.ep = j.degree(Dim::kEp);
  s.b = m.dtype_bytes;
  s.d = static_cast<double>(m.hidden);
  s.a2a = j.rank_tokens() * m.top_k * m.hidden / (int64_t{j.degree(Dim::kEp)} * j.degree(Dim::kTp));
  s.out = j.rank_tokens() / j.degree(Dim::kTp) * m.hidden / j.degree(Dim::kEp);
  s.router = m.RouterParams() / j.degree(Dim::kEp);
  return s;
}

// FLOPs of this rank's experts: its share of the t * top_k token-expert pairs, plus the shared
// experts on every token.
double ExpertFlops(const Job& j, const MoeSizes& s) {
  const ModelSpec& m = j.model();
  return 2 * (s.t * m.top_k / s.ep) * m.ExpertParams() / s.tp +
         2 * s.t * m.shared_experts * m.ExpertParams() / s.tp;
}

double ExpertBytes(const Job& j, const MoeSizes& s) {
  const ModelSpec& m = j.model();
  double local = (m.experts / s.ep + m.shared_experts) * m.ExpertParams() / s.tp;
  return s.b * (local + 2 * s.t * m.top_k * s.d / s.ep);
}

}  // namespace

Id MoeForward(Program& p, Id x, Id weights) {
  const Job& j = p.job();
  const ModelSpec& m = j.model();
  MoeSizes s = Sizes(j);
  Id rw = p.Collective(Family::kEp, "moe.ag_router_w", CollectiveType::kAllGather, s.router,
                       GroupKind::kEp, {});
  Id router = p.Compute("moe.router", 2 * s.t * s.d * m.experts,
                        s.b * (s.t * s.d + m.RouterParams()), {x, rw, weights});
  Id dispatch = p.Collective(Family::kEp, "moe.a2a_dispatch", CollectiveType::kAllToAll, s.a2a,
                             GroupKind::kEp, {router});
  Id experts =
      p.Compute("moe.experts", ExpertFlops(j, s), ExpertBytes(j, s), {Either(dispatch, router)});
  Id combine = p.Collective(Family::kEp, "moe.a2a_combine", CollectiveType::kAllToAll, s.a2a,
                            GroupKind::kEp, {experts});
  Id out = p.Collective(Family::kEp, "moe.ag_out", CollectiveType::kAllGather, s.out,
                        GroupKind::kEp, {Either(combine, experts)});
  return Either(out, Either(combine, experts));
}

Id MoeBackward(Program& p, Id dy, Id weights, std::vector<Id>* wgrads) {
  const Job& j = p.job();
  const ModelSpec& m = j.model();
  MoeSizes s = Sizes(j);
  Id g = Either(p.Collective(Family::kEp, "moe.ag_dy", CollectiveType::kAllGather, s.out,
                             GroupKind::kEp, {dy}),
                dy);
  Id dispatch = p.Collective(Family::kEp, "moe.a2a_dispatch_bwd", CollectiveType::kAllToAll, s.a2a,
                             GroupKind::kEp, {g});
  Id experts = p.Compute("moe.experts_bwd", 2 * ExpertFlops(j, s), 2 * ExpertBytes(j, s),
                         {Either(dispatch, g), weights});
  Id combine = p.Collective(Family::kEp, "moe.a2a_combine_bwd", CollectiveType::kAllToAll, s.a2a,
                            GroupKind::kEp, {experts});
  Id router = p.Compute("moe.router_bwd", 4 * s.t * s.d * m.experts,
                        s.b * (s.t * s.d + m.RouterParams()), {Either(combine, experts)});
  wgrads->push_back(experts);
  wgrads->push_back(router);
  return router;
}

}  // namespace genie::synth
