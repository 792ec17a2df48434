#include "genie/sim/symmetry.h"

#include <gtest/gtest.h>

#include <set>

namespace genie::sim {
namespace {

using config::NetworkConfig;
using config::TopologyKind;

Topology FoldTopology(std::vector<TopologyKind> kinds, std::vector<int> n) {
  NetworkConfig c;
  c.topology = kinds;
  c.npus_count = n;
  c.bandwidth_gbps.assign(n.size(), 50.0);
  c.latency_ns.assign(n.size(), 500.0);
  auto t = Topology::Create(c);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

// Megatron's order on Ring 8 x Switch 8 x Switch 16: rank = tp + 8 dp + 128 pp. dp is split
// over the two Switch dimensions, so only every 8th rotation keeps each dimension's coordinate
// to itself; tp rotates the Ring.
TEST(RankFoldTest, FindsTheRotationsThatAreNetworkAutomorphisms) {
  Topology t = FoldTopology({TopologyKind::kRing, TopologyKind::kSwitch, TopologyKind::kSwitch}, {8, 8, 16});
  std::vector<std::string> notes;
  auto f = RankFold::Find(t, 1024, {{8, 16, "dp"}, {1, 8, "tp"}}, &notes);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->copies(), 2 * 8);
  EXPECT_EQ(f->representatives(), 64);
  EXPECT_TRUE(notes.empty());
  std::set<int> reps;
  for (int r = 0; r < 1024; ++r) {
    reps.insert(f->Rep(r));
    EXPECT_TRUE(f->IsRep(f->Rep(r)));
    EXPECT_EQ(f->ToRep(r, r), f->Rep(r));
  }
  EXPECT_EQ(reps.size(), 64u);
  // Every image of every representative, once.
  std::set<int> images;
  for (int rep : reps) {
    for (int j = 0; j < f->copies(); ++j) {
      EXPECT_EQ(f->Rep(f->Image(rep, j)), rep);
      images.insert(f->Image(rep, j));
    }
  }
  EXPECT_EQ(images.size(), 1024u);
  // rank 67 = dp 8, tp 3: rank 0 (dp 0, tp 0) stands for it.
  EXPECT_EQ(f->Rep(67), 0);
}

TEST(RankFoldTest, ARingThatIsNotRotatedIsNoSymmetry) {
  // tp 4 inside a Ring of 8 (rank = tp + 4 ep): rotating tp wraps inside half the ring.
  Topology t = FoldTopology({TopologyKind::kRing}, {8});
  std::vector<std::string> notes;
  auto f = RankFold::Find(t, 8, {{1, 4, "tp"}}, &notes);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("does not rotate network dimension 0"), std::string::npos)
      << f.status().message();
  // The ep coordinate (stride 4) rotates the ring by 4: a symmetry.
  auto ep = RankFold::Find(t, 8, {{1, 4, "tp"}, {4, 2, "ep"}}, &notes);
  ASSERT_TRUE(ep.ok()) << ep.status().message();
  EXPECT_EQ(ep->copies(), 2);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("no rotation of tp"), std::string::npos) << notes[1];
}

TEST(RankFoldTest, LinksMapToTheirRepresentativeNpusLinks) {
  Topology t = FoldTopology({TopologyKind::kSwitch, TopologyKind::kRing}, {4, 4});
  auto f = RankFold::Find(t, 16, {{4, 4, "dp"}}, nullptr);
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto fold = f->LinkFold(t);
  ASSERT_TRUE(fold.ok()) << fold.status().message();
  // Route 13 -> 5 (the Ring from coordinate 3 to 1, two hops): each link mapped to the link of
  // its sending NPU's representative, the same hop of the representatives' copy.
  std::vector<int> route;
  t.Route(13, 5, &route);
  for (int l : route) {
    const Topology::LinkInfo from = t.link(l), to = t.link((*fold)[l]);
    EXPECT_EQ(from.dim, to.dim);
    EXPECT_EQ(f->Rep(from.from_device), to.from_device) << t.LinkName(l);
    EXPECT_TRUE(f->IsRep(to.from_device));
  }
}

TEST(RankFoldTest, GroupsSpanningCopiesMustBeRotatedOntoThemselves) {
  Topology t = FoldTopology({TopologyKind::kSwitch}, {8});
  auto f = RankFold::Find(t, 8, {{1, 8, "dp"}}, nullptr);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->CheckGroups({{0, 1, 2, 3, 4, 5, 6, 7}}).ok());
  EXPECT_FALSE(f->CheckGroups({{0, 2, 4, 6, 1, 3, 5, 7}}).ok());  // 7 -> 0 does not follow
  EXPECT_FALSE(f->CheckGroups({{0, 1, 3, 2, 4, 5, 7, 6}}).ok());
  EXPECT_FALSE(f->CheckGroups({{0, 1}}).ok());
}

}  // namespace
}  // namespace genie::sim
