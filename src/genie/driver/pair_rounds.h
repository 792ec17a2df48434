// PairRounds: a round-robin tournament of n participants (the circle method) — n−1 rounds for
// even n, n for odd n (each sits out one round) — in which every pair meets exactly once and
// the pairs of a round are disjoint. `genie doctor` measures one round at a time, so a scan
// grows linearly with hosts and no host carries two measurements at once. Pure.
#pragma once

#include <utility>
#include <vector>

namespace genie::driver {

// rounds[r] = the pairs (lower, higher) that meet in round r. Every rank computes the same.
std::vector<std::vector<std::pair<int, int>>> PairRounds(int n);

}  // namespace genie::driver
