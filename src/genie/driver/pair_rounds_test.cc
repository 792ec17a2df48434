#include "genie/driver/pair_rounds.h"

#include <gtest/gtest.h>

#include <set>

namespace genie::driver {
namespace {

TEST(PairRounds, EveryPairMeetsOnceInDisjointRounds) {
  for (int n = 1; n <= 17; ++n) {
    auto rounds = PairRounds(n);
    EXPECT_EQ(static_cast<int>(rounds.size()), n < 2 ? 0 : (n % 2 == 0 ? n - 1 : n)) << n;
    std::set<std::pair<int, int>> met;
    for (const auto& round : rounds) {
      std::set<int> busy;
      for (auto [a, b] : round) {
        EXPECT_LT(a, b);
        EXPECT_GE(a, 0);
        EXPECT_LT(b, n);
        EXPECT_TRUE(busy.insert(a).second) << "rank " << a << " twice in one round, n=" << n;
        EXPECT_TRUE(busy.insert(b).second) << "rank " << b << " twice in one round, n=" << n;
        EXPECT_TRUE(met.insert({a, b}).second) << a << "-" << b << " meet twice, n=" << n;
      }
      EXPECT_GE(static_cast<int>(busy.size()), n - 1) << "more than one rank idle, n=" << n;
    }
    EXPECT_EQ(static_cast<int>(met.size()), n * (n - 1) / 2) << n;
  }
}

}  // namespace
}  // namespace genie::driver
