#include "genie/driver/pair_rounds.h"

#include <algorithm>

namespace genie::driver {

std::vector<std::vector<std::pair<int, int>>> PairRounds(int n) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (n < 2) return rounds;
  // Odd n: a phantom participant n; whoever meets it sits the round out.
  const int m = n % 2 == 0 ? n : n + 1;
  // Participant m−1 stays put; the others rotate one place per round.
  for (int r = 0; r < m - 1; ++r) {
    std::vector<std::pair<int, int>> round;
    for (int i = 0; i < m / 2; ++i) {
      int a = i == 0 ? m - 1 : (r + i) % (m - 1);
      int b = (r + m - 1 - i) % (m - 1);
      if (a >= n || b >= n) continue;
      round.emplace_back(std::min(a, b), std::max(a, b));
    }
    std::sort(round.begin(), round.end());
    rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace genie::driver
