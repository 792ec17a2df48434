#include "genie/net/transport.h"

#include <fmt/format.h>

#include <algorithm>

namespace genie::net {

std::vector<int> AllPeers(int rank, int world_size) {
  std::vector<int> peers;
  peers.reserve(static_cast<size_t>(std::max(0, world_size - 1)));
  for (int p = 0; p < world_size; ++p) {
    if (p != rank) peers.push_back(p);
  }
  return peers;
}

Result<std::vector<int>> NormalizePeers(std::vector<int> peers, int rank, int world_size) {
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  for (int p : peers) {
    if (p < 0 || p >= world_size || p == rank) {
      return Status::InvalidArgument(
          fmt::format("rank {}: peer rank {} is {} (world of {} ranks)", rank, p,
                      p == rank ? "this rank itself" : "outside the world", world_size));
    }
  }
  return peers;
}

}  // namespace genie::net
