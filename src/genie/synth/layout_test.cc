#include "genie/synth/layout.h"

#include <gtest/gtest.h>

#include <sstream>

#include "genie/synth/job.h"

namespace genie::synth {
namespace {

TEST(Placement, MixedRadixWithTheFirstDimensionFastest) {
  Layout l;
  l.dp = 2, l.tp = 4, l.pp = 2;
  auto order = ParseOrder("tp,sp,ep,dp,pp");
  ASSERT_TRUE(order.ok());
  Placement p(l, *order);
  EXPECT_EQ(p.world(), 16);
  EXPECT_EQ(p.Coord(13, Dim::kTp), 1);
  EXPECT_EQ(p.Coord(13, Dim::kDp), 1);
  EXPECT_EQ(p.Coord(13, Dim::kPp), 1);
  EXPECT_EQ(p.Members(GroupKind::kTp, 13), (std::vector<int>{12, 13, 14, 15}));
  EXPECT_EQ(p.Members(GroupKind::kDp, 13), (std::vector<int>{9, 13}));
  EXPECT_EQ(p.WithCoord(13, Dim::kPp, 0), 5);
  EXPECT_EQ(p.GroupId(GroupKind::kSp, 13), 0);  // sp = 1: no group
  EXPECT_EQ(p.GroupSize(GroupKind::kDpSp), 1);
  // Every rank of a group sees the same id; ids are distinct across groups.
  EXPECT_EQ(p.GroupId(GroupKind::kTp, 12), p.GroupId(GroupKind::kTp, 15));
  EXPECT_NE(p.GroupId(GroupKind::kTp, 12), p.GroupId(GroupKind::kTp, 8));
  EXPECT_NE(p.GroupId(GroupKind::kTp, 0), p.GroupId(GroupKind::kDp, 0));
}

TEST(Placement, CommGroupFileListsEveryGroupOnce) {
  Layout l;
  l.dp = 2, l.tp = 2, l.sp = 2;
  Placement p(l, *ParseOrder("dp,tp,sp,ep,pp"));
  std::ostringstream out;
  p.WriteCommGroups(out);
  // The shipped llama_dp2_tp2_sp2 file's groups (ids differ: there dp and sp interleave).
  EXPECT_EQ(out.str(),
            "{\"1\": [0, 1], \"2\": [2, 3], \"3\": [4, 5], \"4\": [6, 7], \"5\": [0, 2], "
            "\"6\": [1, 3], \"7\": [4, 6], \"8\": [5, 7], \"9\": [0, 4], \"10\": [1, 5], "
            "\"11\": [2, 6], \"12\": [3, 7], \"13\": [0, 1, 4, 5], \"14\": [2, 3, 6, 7]}\n");
}

TEST(ParseOrder, RejectsRepeatsAndMissingDimensions) {
  EXPECT_FALSE(ParseOrder("dp,dp,tp,sp,ep").ok());
  EXPECT_FALSE(ParseOrder("dp,tp").ok());
  EXPECT_FALSE(ParseOrder("dp,tp,xx,ep,pp").ok());
  EXPECT_TRUE(ParseOrder("cp,tp,dp,ep,pp").ok());
}

TEST(Job, StgStagesCountTheEmbeddingsAsLayers) {
  Layout l;
  l.pp = 2;
  auto job = Job::Make(*ModelPreset("stg-gpt"), l, *GpuPreset("h100"));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->FirstLayer(0), 0);
  EXPECT_EQ(job->LastLayer(0), 2);
  EXPECT_EQ(job->LastLayer(1), 4);
  EXPECT_TRUE(job->HasOutputEmbedding(1));
}

TEST(Job, ErrorsNameTheFlag) {
  Layout l;
  l.tp = 3;
  auto job = Job::Make(*ModelPreset("llama3-8b"), l, *GpuPreset("h100"));
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.status().message().find("--tp"), std::string::npos) << job.status().message();
}

TEST(Model, FileOverridesAPreset) {
  ModelSpec m;
  ASSERT_TRUE(
      ApplyModelFile("preset: llama3-8b\nlayers: 2  # short\nkv-heads: 4\n", "m.yaml", &m).ok());
  EXPECT_EQ(m.layers, 2);
  EXPECT_EQ(m.kv_heads, 4);
  EXPECT_EQ(m.hidden, 4096);
  Status bad = ApplyModelFile("layers: two\n", "m.yaml", &m);
  EXPECT_NE(bad.message().find("m.yaml:1"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace genie::synth
