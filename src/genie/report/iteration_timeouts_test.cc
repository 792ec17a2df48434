#include "genie/report/iteration_timeouts.h"

#include <gtest/gtest.h>

namespace genie::report {
namespace {

record::RankSummary Rank(int rank, int iteration, int64_t timeouts, int64_t host_id) {
  record::RankSummary s;
  s.rank = rank;
  s.iteration = iteration;
  s.tcp_timeouts = timeouts;
  s.host_id = host_id;
  return s;
}

// Each host (network namespace) once, with the most any of its ranks read; warm-ups and
// iterations without timeouts left out.
TEST(IterationTimeouts, EachHostCountedOnceAndWarmUpsSkipped) {
  const std::vector<record::RankSummary> ranks = {
      Rank(0, -1, 5, 100),                       // warm-up
      Rank(0, 0, 0, 0),    Rank(1, 0, 0, 0),     // healthy
      Rank(4, 1, 2, 100),  Rank(0, 1, 3, 100),   // one host, two ranks
      Rank(6, 1, 1, 200),
  };
  const auto t = TimeoutsPerIteration(ranks);
  ASSERT_EQ(t.size(), 1u);
  const IterationTimeouts& one = t.at(1);
  EXPECT_EQ(one.total, 4);
  ASSERT_EQ(one.by_host.size(), 2u);
  EXPECT_EQ(one.by_host[0], std::make_pair(0, int64_t{3}));
  EXPECT_EQ(one.by_host[1], std::make_pair(6, int64_t{1}));
  EXPECT_EQ(DescribeTimeouts(one),
            "4 TCP retransmission timeout(s) in this iteration (3 on rank 0's host, 1 on rank "
            "6's), each a stall of 200 ms or more");
}

// Ranks that could not tell their host (host_id 0) are each a host of their own: summed.
TEST(IterationTimeouts, RanksWithoutAHostIdAreHostsOfTheirOwn) {
  const auto t = TimeoutsPerIteration({Rank(2, 0, 1, 0), Rank(3, 0, 2, 0)});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.at(0).total, 3);
  EXPECT_EQ(t.at(0).by_host.size(), 2u);
}

}  // namespace
}  // namespace genie::report
