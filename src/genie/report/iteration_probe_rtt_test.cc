#include "genie/report/iteration_probe_rtt.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

record::RankSummary Rank(int rank, int iteration, int64_t episodes, TimeNs ns) {
  record::RankSummary s;
  s.rank = rank;
  s.iteration = iteration;
  s.probe_rtt_episodes = episodes;
  s.probe_rtt_ns = ns;
  return s;
}

// Every rank's sockets summed (each rank reports the directions it sends on); warm-ups and
// iterations without an episode left out.
TEST(IterationProbeRtt, SummedOverRanksWarmUpsSkipped) {
  const std::vector<record::RankSummary> ranks = {
      Rank(0, -1, 4, 800 * kNsPerMs),                                       // warm-up
      Rank(0, 0, 0, 0),                Rank(1, 0, 0, 0),                    // none
      Rank(3, 2, 2, 400 * kNsPerMs),   Rank(0, 2, 2, 380 * kNsPerMs),
      Rank(1, 2, 1, 200 * kNsPerMs),   Rank(2, 2, 0, 30 * kNsPerMs),  // an episode begun before
      Rank(6, 2, 1, 190 * kNsPerMs),
  };
  const auto p = ProbeRttPerIteration(ranks);
  ASSERT_EQ(p.size(), 1u);
  const IterationProbeRtt& it = p.at(2);
  EXPECT_EQ(it.episodes, 6);
  EXPECT_EQ(it.ns, 1170 * kNsPerMs);
  EXPECT_EQ(it.ranks, (std::vector<int>{0, 1, 3, 6}));
  const std::string text = DescribeProbeRtt(it);
  EXPECT_NE(text.find("6 connection(s) of ranks 0-1,3,6"), std::string::npos) << text;
  EXPECT_NE(text.find("195.000 ms each"), std::string::npos) << text;
}

}  // namespace
}  // namespace genie::report
