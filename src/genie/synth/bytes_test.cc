// Closed-form tests: for several layouts, the bytes each rank's step puts into each collective
// family equal the formulas of docs/synth.md ("Bytes per step"), written out again here from
// the model's dimensions — not from the emitters' helpers.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "genie/synth/step.h"
#include "genie/trace/attributes.h"

namespace genie::synth {
namespace {

using Totals = std::map<std::string, int64_t>;

Totals Emitted(const Job& job, int rank) {
  VectorSink sink;
  auto n = EmitRank(job, rank, &sink);
  EXPECT_TRUE(n.ok()) << n.status().message();
  Totals totals;
  for (const auto& node : sink.nodes) {
    if (node.type() == ChakraProtoMsg::COMP_NODE) continue;
    std::string family = node.name().substr(0, node.name().find('.'));
    totals[family] += *trace::GetInt(node, "comm_size").value();
  }
  return totals;
}

// docs/synth.md, "Bytes per step", per rank. All in elements, times dtype bytes at the end.
Totals Formulas(const Job& job, int rank) {
  const ModelSpec& m = job.model();
  const Layout& l = job.layout();
  const int64_t t = job.rank_tokens(), T = job.replica_tokens(), D = m.hidden;
  const int64_t tp = l.tp, sp = l.sp, ep = l.ep, M = l.microbatches;
  const int stage = job.placement().Coord(rank, Dim::kPp);
  const int64_t Ls = job.LastLayer(stage) - job.FirstLayer(stage);
  const bool seqpar = l.sequence_parallel != 0;
  const int64_t kvd = D / m.heads * m.kv_heads;
  // Parameters of one layer on this rank, and of one embedding.
  const int64_t attn = (D * (D + 2 * kvd) + D * D) / tp;
  const int64_t Pl = m.moe()
                         ? attn + (m.experts / ep) * m.ffn_matrices * D * m.ffn / tp +
                               (m.convention == Convention::kStg ? D * m.top_k : D * m.experts) / ep
                         : attn + m.ffn_matrices * D * m.ffn / tp;
  const int64_t E = m.convention == Convention::kStg ? m.vocab * D : (m.vocab + tp - 1) / tp * D;
  const int64_t embeddings =
      int64_t{job.HasInputEmbedding(stage)} + int64_t{job.HasOutputEmbedding(stage)};
  const int64_t G = job.placement().GroupSize(job.grad_group());
  Totals f;
  if (tp > 1) {
    int64_t per_layer = m.moe() ? (seqpar ? 3 * t * D / tp + 2 * t * D : 2 * t * D)
                                : (seqpar ? 6 * t * D / tp + 4 * t * D : 4 * t * D);
    f["tp"] = M * Ls * per_layer;
  }
  if (sp > 1) {
    int64_t dkv = m.convention == Convention::kStg ? D : kvd;
    f["sp"] = M * Ls * (2 * t * kvd / tp + 2 * T * dkv / tp);
  }
  if (ep > 1) {
    int64_t router = (m.convention == Convention::kStg ? D * m.top_k : D * m.experts) / ep;
    f["ep"] = M * Ls * (router + 2 * (t / tp) * D / ep + 4 * t * m.top_k * D / (ep * tp));
  }
  if (l.zero == 3 && G > 1) f["fsdp"] = M * Ls * (2 * (Pl / G) + Pl);
  int64_t dp = 0;
  if (m.convention == Convention::kStg) {
    if (l.zero != 3 && l.dp > 1) dp += M * Ls * Pl;
    if (sp > 1) dp += M * Ls * Pl;
    int64_t groups = (l.dp > 1) + (tp > 1) + (sp > 1);
    dp += embeddings * E * groups;
  } else if (G > 1) {
    int64_t synced = (l.zero == 3 ? 0 : Ls * Pl) + embeddings * E;
    dp += synced;
    if (l.zero == 1 || l.zero == 2) dp += synced / G;
  }
  if (dp > 0) f["dp"] = dp;
  const int64_t act = seqpar ? t * D / tp : t * D;
  const int64_t P = l.pp;
  int64_t pp = M * act * 2 * ((stage < P - 1 ? 1 : 0) + (stage > 0 ? 1 : 0));
  if (pp > 0) f["pp"] = pp;
  for (auto& [k, v] : f) v *= m.dtype_bytes;
  return f;
}

ModelSpec Small(bool moe) {
  ModelSpec m;
  m.name = moe ? "small-moe" : "small";
  m.layers = 8;
  m.hidden = 512;
  m.ffn = 1536;
  m.heads = 8;
  m.kv_heads = 2;
  m.vocab = 1000;
  m.seq = 256;
  m.global_batch = 32;
  m.ffn_matrices = 3;
  if (moe) {
    m.experts = 4;
    m.top_k = 2;
  }
  return m;
}

struct Case {
  std::string name;
  ModelSpec model;
  Layout layout;
};

Layout L(int dp, int tp, int pp, int sp, int ep, int zero, int mb, int seqpar = 1) {
  Layout l;
  l.dp = dp, l.tp = tp, l.pp = pp, l.sp = sp, l.ep = ep, l.zero = zero, l.microbatches = mb;
  l.sequence_parallel = seqpar;
  l.bucket_bytes = 3 << 20;  // several buckets per stage
  return l;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class BytesPerStep : public ::testing::TestWithParam<Case> {};

TEST_P(BytesPerStep, EveryRankMatchesTheFormulas) {
  const Case& c = GetParam();
  auto job = Job::Make(c.model, c.layout, *GpuPreset("a100"));
  ASSERT_TRUE(job.ok()) << job.status().message();
  for (int rank = 0; rank < job->world(); ++rank) {
    Totals want = Formulas(*job, rank), got = Emitted(*job, rank);
    EXPECT_EQ(got, want) << c.name << " rank " << rank;
  }
}

ModelSpec StgLlama() { return *ModelPreset("stg-llama"); }

INSTANTIATE_TEST_SUITE_P(
    Layouts, BytesPerStep,
    ::testing::Values(Case{"dp2_tp2_pp2_1f1b", Small(false), L(2, 2, 2, 1, 1, 0, 4)},
                      Case{"dp2_tp2_sp2_zero1_no_seqpar", Small(false), L(2, 2, 1, 2, 1, 1, 2, 0)},
                      Case{"dp4_fsdp", Small(false), L(4, 1, 1, 1, 1, 3, 2)},
                      Case{"tp2_pp4_zero2", Small(false), L(1, 2, 4, 1, 1, 2, 8)},
                      Case{"moe_dp2_tp2_ep2", Small(true), L(2, 2, 1, 1, 2, 0, 2)},
                      Case{"stg_llama_dp2_tp2_sp2_pp2", StgLlama(), L(2, 2, 2, 2, 1, 0, 2)}),
    [](const auto& p) { return p.param.name; });

TEST(PipelineOrder, OneFOneBWarmsUpByDistanceToTheLastStage) {
  using V = std::vector<std::pair<bool, int>>;
  EXPECT_EQ(PipelineOrder(PipelineSchedule::k1F1B, 0, 2, 3),
            (V{{true, 0}, {true, 1}, {false, 0}, {true, 2}, {false, 1}, {false, 2}}));
  EXPECT_EQ(PipelineOrder(PipelineSchedule::k1F1B, 1, 2, 3),
            (V{{true, 0}, {false, 0}, {true, 1}, {false, 1}, {true, 2}, {false, 2}}));
  EXPECT_EQ(PipelineOrder(PipelineSchedule::kGPipe, 0, 2, 2),
            (V{{true, 0}, {true, 1}, {false, 0}, {false, 1}}));
}

}  // namespace
}  // namespace genie::synth
