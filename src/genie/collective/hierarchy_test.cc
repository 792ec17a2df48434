// Multi-dimensional collectives: every shape x per-dimension algorithm combination x
// optimisation mode x involved_dim subset passes the checker; byte totals follow ASTRA-sim's
// phase structure.
#include "genie/collective/hierarchy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "genie/collective/planner.h"
#include "genie/collective/schedule_checker.h"

namespace genie::collective {
namespace {

int Product(const std::vector<int>& dims) {
  int p = 1;
  for (int d : dims) p *= d;
  return p;
}

CollectiveSpec Spec(CollectiveType type, std::vector<int> dims, std::vector<Algorithm> algs,
                    Optimization opt, Bytes size) {
  CollectiveSpec s;
  s.type = type;
  s.size = size;
  const int n = Product(dims);
  for (int i = 0; i < n; ++i) s.group.push_back(100 + 2 * (n - 1 - i));  // non-contiguous
  s.options.dims = std::move(dims);
  s.options.algorithms = std::move(algs);
  s.options.optimization = opt;
  s.options.chunks = 2;
  return s;
}

std::string Name(const CollectiveSpec& s) {
  std::string out = std::string(CollectiveOpName(s.type)) + " dims=";
  for (int d : s.options.dims) out += std::to_string(d) + "x";
  out += " algs=";
  for (Algorithm a : s.options.algorithms) out += std::string(AlgorithmName(a)) + ",";
  out += s.options.optimization == Optimization::kLocalBwAware ? " localBWAware" : " baseline";
  if (!s.options.involved_dim.empty()) {
    out += " involved=";
    for (bool b : s.options.involved_dim) out += b ? "1" : "0";
  }
  return out + " S=" + std::to_string(s.size);
}

void ExpectChecks(const CollectiveSpec& spec) {
  auto all = PlanAll(spec);
  ASSERT_TRUE(all.ok()) << Name(spec) << ": " << all.status().ToString();
  const Status st = CheckSchedules(spec, *all);
  EXPECT_TRUE(st.ok()) << Name(spec) << ": " << st.ToString();
}

// Every combination of per-dimension algorithms from `choices` for `dims` dimensions.
std::vector<std::vector<Algorithm>> Combos(size_t dims, const std::vector<Algorithm>& choices) {
  std::vector<std::vector<Algorithm>> out = {{}};
  for (size_t d = 0; d < dims; ++d) {
    std::vector<std::vector<Algorithm>> next;
    for (const auto& prefix : out) {
      for (Algorithm a : choices) {
        auto v = prefix;
        v.push_back(a);
        next.push_back(v);
      }
    }
    out = next;
  }
  return out;
}

const std::vector<std::vector<int>> kShapes = {{2, 2}, {4, 2}, {2, 4}, {8, 4}, {4, 4, 2}};

TEST(Hierarchy, EveryShapeCollectiveAlgorithmAndMode) {
  const std::vector<Algorithm> choices = {Algorithm::kRing, Algorithm::kDirect,
                                          Algorithm::kHalvingDoubling};
  for (const auto& dims : kShapes) {
    for (const auto& algs : Combos(dims.size(), choices)) {
      for (CollectiveType t : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                               CollectiveType::kAllGather}) {
        for (Optimization o : {Optimization::kBaseline, Optimization::kLocalBwAware}) {
          if (t != CollectiveType::kAllReduce && o == Optimization::kLocalBwAware) continue;
          ExpectChecks(Spec(t, dims, algs, o, 1003));
        }
      }
    }
  }
}

TEST(Hierarchy, TreesOnTheTopDimensionAndFlatCollectives) {
  for (const auto& dims : kShapes) {
    std::vector<Algorithm> algs(dims.size(), Algorithm::kRing);
    algs.back() = Algorithm::kDoubleBinaryTree;
    for (Optimization o : {Optimization::kBaseline, Optimization::kLocalBwAware}) {
      ExpectChecks(Spec(CollectiveType::kAllReduce, dims, algs, o, 4099));
    }
    // Collectives that run flat over the whole group keep working on a topology.
    for (CollectiveType t :
         {CollectiveType::kAllToAll, CollectiveType::kBroadcast, CollectiveType::kReduce,
          CollectiveType::kGather, CollectiveType::kScatter, CollectiveType::kBarrier}) {
      ExpectChecks(Spec(t, dims, {Algorithm::kDirect}, Optimization::kBaseline, 1003));
    }
  }
}

TEST(Hierarchy, InvolvedDimensionSubsets) {
  const std::vector<std::vector<bool>> subsets = {{true, false, true},
                                                  {false, true, false},
                                                  {false, false, true},
                                                  {true, true, false},
                                                  {false, false, false}};
  for (const auto& inv : subsets) {
    for (CollectiveType t :
         {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather,
          CollectiveType::kAllToAll, CollectiveType::kBroadcast}) {
      for (Optimization o : {Optimization::kBaseline, Optimization::kLocalBwAware}) {
        // All-to-all runs on every involved dimension with its algorithm, which must
        // implement it (halving-doubling does not).
        const Algorithm mid =
            t == CollectiveType::kAllToAll ? Algorithm::kDirect : Algorithm::kHalvingDoubling;
        CollectiveSpec s = Spec(t, {4, 4, 2}, {Algorithm::kRing, mid, Algorithm::kDirect}, o, 1003);
        s.root = 5;
        s.options.involved_dim = inv;
        ExpectChecks(s);
      }
    }
  }
}

TEST(Hierarchy, InvolvedDimensionsKeepTrafficInsideTheSubgroup) {
  // 4x2, only dimension 1: ranks talk to the one peer that differs in digit 1.
  CollectiveSpec s =
      Spec(CollectiveType::kAllReduce, {4, 2}, {Algorithm::kRing}, Optimization::kBaseline, 800);
  s.options.chunks = 1;
  s.options.involved_dim = {false, true};
  auto all = PlanAll(s);
  ASSERT_TRUE(all.ok());
  for (size_t g = 0; g < all->size(); ++g) {
    const int peer = s.group[(g + 4) % 8];
    for (const Step& st : (*all)[g].steps) {
      if (HasSend(st.kind)) {
        EXPECT_EQ(st.send_peer, peer);
      }
      if (HasRecv(st.kind)) {
        EXPECT_EQ(st.recv_peer, peer);
      }
    }
    EXPECT_EQ(BytesSent((*all)[g]), 800u);  // 2(n-1)/n S with n = 2
  }
}

TEST(Hierarchy, FlattenedVariantsIgnoreTheShape) {
  for (Algorithm a : {Algorithm::kOneRing, Algorithm::kOneDirect, Algorithm::kOneHalvingDoubling}) {
    CollectiveSpec s =
        Spec(CollectiveType::kAllReduce, {8, 4}, {a}, Optimization::kBaseline, 32 * 100);
    ExpectChecks(s);
    auto all = PlanAll(s);
    ASSERT_TRUE(all.ok());
    Bytes total = 0;
    for (const Schedule& x : *all) {
      total += BytesSent(x);
      for (const Phase& p : x.phases) EXPECT_EQ(p.dim, 0);
    }
    EXPECT_EQ(total, 2u * 31 * 3200) << AlgorithmName(a);  // one 32-rank all-reduce
  }
}

TEST(Hierarchy, PhaseStructureAndBytesFollowAstraSim) {
  // 8x4 ring,ring all-reduce of S = 32 KiB (1 chunk):
  //  localBWAware: RS dim0 (7/8 S) + AR dim1 on S/8 (2*3/4*S/8) + AG dim0 (7/8 S) per rank;
  //  baseline: AR dim0 (2*7/8 S) + AR dim1 (2*3/4 S).
  const Bytes size = 32 * 1024;
  for (Optimization o : {Optimization::kLocalBwAware, Optimization::kBaseline}) {
    CollectiveSpec s =
        Spec(CollectiveType::kAllReduce, {8, 4}, {Algorithm::kRing, Algorithm::kRing}, o, size);
    s.options.chunks = 1;
    auto one = Plan(s, 5);
    ASSERT_TRUE(one.ok());
    std::vector<std::pair<int, CollectiveType>> phases;
    for (const Phase& p : one->phases) phases.push_back({p.dim, p.op});
    if (o == Optimization::kLocalBwAware) {
      EXPECT_EQ(phases,
                (std::vector<std::pair<int, CollectiveType>>{{0, CollectiveType::kReduceScatter},
                                                             {1, CollectiveType::kAllReduce},
                                                             {0, CollectiveType::kAllGather}}));
      EXPECT_EQ(BytesSent(*one), size * 7 / 8 + 2 * 3 * size / 32 + size * 7 / 8);
    } else {
      EXPECT_EQ(phases, (std::vector<std::pair<int, CollectiveType>>{
                            {0, CollectiveType::kAllReduce}, {1, CollectiveType::kAllReduce}}));
      EXPECT_EQ(BytesSent(*one), 2 * size * 7 / 8 + 2 * size * 3 / 4);
    }
  }
}

TEST(Hierarchy, ShapeErrorsNameTheMismatch) {
  CollectiveSpec s =
      Spec(CollectiveType::kAllReduce, {4, 2}, {Algorithm::kRing}, Optimization::kBaseline, 100);
  s.options.dims = {4, 3};
  auto r = Plan(s, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("topology 4x3 holds 12 ranks"), std::string::npos)
      << r.status().message();
  s.options.dims = {4, 2};
  s.options.algorithms = {Algorithm::kRing, Algorithm::kRing, Algorithm::kRing};
  r = Plan(s, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("3 algorithms given for 2 dimensions"), std::string::npos);
}

TEST(Hierarchy, AllGatherRunsTheLastDimensionFirstAsAstraSim) {
  // ASTRA-sim's generate_collective reverses the dimension map for all-gather: on 4x2x3 with
  // S per rank, the dim-2 phase gathers S from 2 peers, dim 1 then 3S from 1 peer, dim 0 last
  // 6S from 3 peers (ring: each message is what one member holds).
  CollectiveSpec s =
      Spec(CollectiveType::kAllGather, {4, 2, 3}, {Algorithm::kRing}, Optimization::kBaseline, 100);
  s.options.chunks = 1;
  auto one = Plan(s, 7);
  ASSERT_TRUE(one.ok());
  std::vector<std::pair<int, Bytes>> per_phase;
  for (const Phase& p : one->phases) {
    Bytes sent = 0;
    for (uint32_t i = p.begin; i < p.end; ++i) {
      if (HasSend(one->steps[i].kind)) sent += one->steps[i].send.length;
    }
    per_phase.push_back({p.dim, sent});
  }
  EXPECT_EQ(per_phase, (std::vector<std::pair<int, Bytes>>{{2, 200}, {1, 300}, {0, 1800}}));
  ExpectChecks(s);
}

// All-to-all per dimension (issue 20): shapes even and uneven, 2-D and 3-D, every per-dimension
// algorithm that implements all-to-all, sizes that do not divide, chunks, channels and slices.
TEST(HierarchyAllToAll, EveryShapeAlgorithmAndSizePassesTheChecker) {
  const std::vector<std::vector<int>> shapes = {{2, 2},    {4, 2},    {2, 3},   {3, 5},
                                                {2, 2, 2}, {3, 2, 2}, {2, 3, 4}};
  const std::vector<Algorithm> choices = {Algorithm::kRing, Algorithm::kDirect,
                                          Algorithm::kPairwise};
  for (const auto& dims : shapes) {
    for (const auto& algs : Combos(dims.size(), choices)) {
      for (Bytes size : {Bytes{1003}, Bytes{4096}, Bytes{37}}) {
        CollectiveSpec s =
            Spec(CollectiveType::kAllToAll, dims, algs, Optimization::kBaseline, size);
        ExpectChecks(s);
      }
    }
  }
  // Channels, slices, a direct window and more chunks.
  for (const auto& dims : shapes) {
    CollectiveSpec s =
        Spec(CollectiveType::kAllToAll, dims, {Algorithm::kDirect}, Optimization::kBaseline, 10007);
    s.options.chunks = 3;
    s.options.channels = 2;
    s.options.slice_bytes = 64;
    s.options.direct_window = 1;
    ExpectChecks(s);
    s.options.algorithms = {Algorithm::kRing};
    ExpectChecks(s);
  }
}

TEST(HierarchyAllToAll, InvolvedDimensionsAndDimensionsOfOne) {
  for (const auto& inv : std::vector<std::vector<bool>>{
           {true, false, true}, {false, true, true}, {true, true, false}, {false, true, false}}) {
    CollectiveSpec s = Spec(CollectiveType::kAllToAll, {3, 2, 2},
                            {Algorithm::kRing, Algorithm::kDirect, Algorithm::kPairwise},
                            Optimization::kBaseline, 3001);
    s.options.involved_dim = inv;
    ExpectChecks(s);
  }
  // A dimension of one member runs no phase (ASTRA-sim skips it); with one dimension left the
  // all-to-all is the flat one, with that dimension's algorithm.
  CollectiveSpec s = Spec(CollectiveType::kAllToAll, {4, 1, 2},
                          {Algorithm::kRing, Algorithm::kHalvingDoubling, Algorithm::kDirect},
                          Optimization::kBaseline, 4096);
  ExpectChecks(s);
  auto one = Plan(s, 5);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  std::vector<int> dims;
  for (const Phase& p : one->phases) {
    if (p.chunk == 0) dims.push_back(p.dim);
  }
  EXPECT_EQ(dims, (std::vector<int>{0, 2}));
  s.options.dims = {1, 8};
  s.options.algorithms = {Algorithm::kHalvingDoubling, Algorithm::kDirect};
  ExpectChecks(s);
  one = Plan(s, 5);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  for (const Phase& p : one->phases) EXPECT_EQ(p.dim, 1);
  EXPECT_EQ(MessagesSent(*one), 2u * 7);  // flat direct: 7 peers, 2 chunks
}

// ASTRA-sim's phase structure (Sys::generate_collective, Ring / AllToAll): an all-to-all of the
// whole chunk on dimension 0, then 1, then 2; on dimension d a ring sends n(n-1)/2 messages
// and direct n-1, each of chunk / n_d bytes.
TEST(HierarchyAllToAll, PhasesAndMessagesFollowAstraSim) {
  const Bytes size = 24 * 1024;  // one chunk; divisible by every n_d and by 24 x 4
  CollectiveSpec s =
      Spec(CollectiveType::kAllToAll, {4, 2, 3},
           {Algorithm::kRing, Algorithm::kDirect, Algorithm::kRing}, Optimization::kBaseline, size);
  s.options.chunks = 1;
  for (int g : {0, 7, 23}) {
    auto one = Plan(s, g);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    std::vector<std::pair<int, std::vector<Bytes>>> per_phase;
    for (const Phase& p : one->phases) {
      EXPECT_EQ(p.op, CollectiveType::kAllToAll);
      std::vector<Bytes> msgs;
      for (uint32_t i = p.begin; i < p.end; ++i) {
        if (HasSend(one->steps[i].kind)) msgs.push_back(one->steps[i].send.length);
      }
      per_phase.push_back({p.dim, msgs});
    }
    EXPECT_EQ(per_phase, (std::vector<std::pair<int, std::vector<Bytes>>>{
                             {0, std::vector<Bytes>(6, size / 4)},
                             {1, std::vector<Bytes>(1, size / 2)},
                             {2, std::vector<Bytes>(3, size / 3)}}))
        << "rank index " << g;
    EXPECT_EQ(BytesSent(*one), 6 * size / 4 + size / 2 + 3 * size / 3);
  }
  ExpectChecks(s);
}

// The simulator plans chunks one at a time: each chunk's staging areas must sit where Plan
// puts them (5 chunks of two lengths).
TEST(HierarchyAllToAll, PlanChunkEqualsThatChunkOfPlan) {
  CollectiveSpec s = Spec(CollectiveType::kAllToAll, {3, 2, 2},
                          {Algorithm::kRing, Algorithm::kDirect, Algorithm::kRing},
                          Optimization::kBaseline, 10004);
  s.options.chunks = 5;
  for (int r = 0; r < 12; ++r) {
    auto whole = Plan(s, r);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString();
    uint32_t at = 0;
    for (int k = 0; k < 5; ++k) {
      auto part = PlanChunk(s, r, k);
      ASSERT_TRUE(part.ok()) << part.status().ToString();
      EXPECT_EQ(part->buffer_bytes, whole->buffer_bytes);
      for (size_t i = 0; i < part->steps.size(); ++i, ++at) {
        const Step& x = whole->steps[at];
        const Step& y = part->steps[i];
        EXPECT_EQ(x.kind, y.kind);
        EXPECT_EQ(x.send, y.send) << "rank index " << r << " chunk " << k << " step " << i;
        EXPECT_EQ(x.recv, y.recv) << "rank index " << r << " chunk " << k << " step " << i;
        EXPECT_EQ(x.send_tag, y.send_tag);
        EXPECT_EQ(x.recv_tag, y.recv_tag);
      }
    }
    EXPECT_EQ(at, whole->steps.size());
  }
  ExpectChecks(s);
}

TEST(HierarchyAllToAll, AlgorithmsWithoutAnAllToAllAreErrors) {
  CollectiveSpec s =
      Spec(CollectiveType::kAllToAll, {2, 4}, {Algorithm::kRing, Algorithm::kHalvingDoubling},
           Optimization::kBaseline, 4096);
  auto r = Plan(s, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dimension 1"), std::string::npos) << r.status().message();
}

// Broadcast, reduce, gather, scatter and barrier: ASTRA-sim builds nothing per dimension for
// them (broadcast waits out the node's runtime, the others are not issued), so genie plans them
// flat over the (involved) group with the first dimension's algorithm. Every type, root and
// algorithm on 2-D and 3-D shapes, even and uneven, passes the checker.
TEST(HierarchyFlatTypes, EveryTypeRootAndAlgorithmOnTwoAndThreeDimensions) {
  const std::vector<std::vector<int>> shapes = {{2, 2}, {4, 2},    {2, 3},
                                                {3, 5}, {2, 2, 2}, {3, 2, 2}};
  for (const auto& dims : shapes) {
    const int n = Product(dims);
    for (Algorithm first : {Algorithm::kRing, Algorithm::kDirect, Algorithm::kHalvingDoubling,
                            Algorithm::kDoubleBinaryTree}) {
      std::vector<Algorithm> algs(dims.size(), Algorithm::kRing);
      algs[0] = first;
      for (CollectiveType t :
           {CollectiveType::kBroadcast, CollectiveType::kReduce, CollectiveType::kGather,
            CollectiveType::kScatter, CollectiveType::kBarrier}) {
        for (int root : {0, n - 1, n / 2}) {
          CollectiveSpec s = Spec(t, dims, algs, Optimization::kBaseline, 1003);
          s.root = root;
          ExpectChecks(s);
          s.size = 4096;
          s.options.channels = 2;
          ExpectChecks(s);
        }
      }
    }
  }
}

// Themis: every shape (uneven ones too), per-dimension algorithm, collective and bandwidth
// weighting passes the checker; the chunks' orders differ, so their blocks nest differently.
TEST(Themis, EveryShapeCollectiveAlgorithmAndBandwidth) {
  const std::vector<std::vector<int>> shapes = {{2, 2}, {4, 2},    {2, 4},   {3, 5},
                                                {8, 4}, {4, 4, 2}, {3, 2, 5}};
  const std::vector<Algorithm> choices = {Algorithm::kRing, Algorithm::kDirect,
                                          Algorithm::kHalvingDoubling};
  for (const auto& dims : shapes) {
    for (const auto& algs : Combos(dims.size(), choices)) {
      for (CollectiveType t : {CollectiveType::kAllReduce, CollectiveType::kReduceScatter,
                               CollectiveType::kAllGather}) {
        for (const std::vector<double>& bw :
             {std::vector<double>{}, std::vector<double>{200, 25, 50},
              std::vector<double>{25, 200, 400}}) {
          CollectiveSpec s = Spec(t, dims, algs, Optimization::kBaseline, 4003);
          s.options.inter_dim = InterDimScheduling::kThemis;
          s.options.chunks = 5;
          s.options.dim_bandwidth.assign(bw.begin(), bw.begin() + std::min(bw.size(), dims.size()));
          ExpectChecks(s);
        }
      }
    }
  }
}

TEST(Themis, InvolvedDimensionsAndSlices) {
  for (const auto& inv : std::vector<std::vector<bool>>{{true, false, true}, {false, true, true}}) {
    for (CollectiveType t :
         {CollectiveType::kAllReduce, CollectiveType::kReduceScatter, CollectiveType::kAllGather}) {
      CollectiveSpec s = Spec(t, {4, 3, 2}, {Algorithm::kRing}, Optimization::kBaseline, 9000);
      s.options.inter_dim = InterDimScheduling::kThemis;
      s.options.involved_dim = inv;
      s.options.dim_bandwidth = {100, 10, 50};
      s.options.chunks = 4;
      s.options.channels = 2;
      s.options.slice_bytes = 256;
      ExpectChecks(s);
    }
  }
}

std::vector<std::vector<int>> ChunkDimOrders(const Schedule& s, CollectiveType op) {
  std::vector<std::vector<int>> out;
  for (const Phase& p : s.phases) {
    if (out.size() <= p.chunk) out.resize(p.chunk + 1);
    if (p.op == op) out[p.chunk].push_back(p.dim);
  }
  return out;
}

TEST(Themis, EqualDimensionsAlternate) {
  // 4x4, equal bandwidth, S per chunk: chunk 0 ties and goes dim 0 first (loads 3/4 S on
  // dim 0, 3/16 S on dim 1); chunk 1 starts on the lighter dim 1 (both at 15/16 S); chunk 2
  // ties again, ... The all-reduce is RS / AR / AG in each chunk's order.
  CollectiveSpec s =
      Spec(CollectiveType::kAllReduce, {4, 4}, {Algorithm::kRing}, Optimization::kBaseline, 4096);
  s.options.inter_dim = InterDimScheduling::kThemis;
  s.options.chunks = 4;
  auto one = Plan(s, 6);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kReduceScatter),
            (std::vector<std::vector<int>>{{0}, {1}, {0}, {1}}));
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kAllReduce),
            (std::vector<std::vector<int>>{{1}, {0}, {1}, {0}}));
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kAllGather),
            (std::vector<std::vector<int>>{{0}, {1}, {0}, {1}}));
  // Every chunk moves the same bytes as localBWAware would in its order: RS 3/4 c, AR on c/4
  // (2 * 3/4 * c/4), AG 3/4 c, with c = 1 KiB.
  EXPECT_EQ(BytesSent(*one), 4u * (768 + 384 + 768));
}

TEST(Themis, BandwidthWeighsTheLoad) {
  // dims 4x4, dim 0 at 25 GB/s, dim 1 at 200: chunk 0 ties (dim 0 first, load 3/4 c / 25 on
  // dim 0, 3/16 c / 200 on dim 1); from then on dim 1 stays lighter and goes first.
  CollectiveSpec s = Spec(CollectiveType::kReduceScatter, {4, 4}, {Algorithm::kRing},
                          Optimization::kBaseline, 4096);
  s.options.inter_dim = InterDimScheduling::kThemis;
  s.options.dim_bandwidth = {25, 200};
  s.options.chunks = 4;
  auto one = Plan(s, 3);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kReduceScatter),
            (std::vector<std::vector<int>>{{0, 1}, {1, 0}, {1, 0}, {1, 0}}));
  // All-gather mirrors it: the lightest dimension runs last, on the most bytes.
  s.type = CollectiveType::kAllGather;
  one = Plan(s, 3);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kAllGather),
            (std::vector<std::vector<int>>{{1, 0}, {0, 1}, {0, 1}, {0, 1}}));
  // Baseline: the last dimension first in every chunk, as ASTRA-sim runs all-gather.
  s.options.inter_dim = InterDimScheduling::kBaseline;
  one = Plan(s, 3);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(ChunkDimOrders(*one, CollectiveType::kAllGather),
            (std::vector<std::vector<int>>{{1, 0}, {1, 0}, {1, 0}, {1, 0}}));
}

}  // namespace
}  // namespace genie::collective
