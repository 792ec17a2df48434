// RankFold: a symmetry of a simulated job that lets one representative rank stand for several.
// The candidate is a rotation of one mixed-radix coordinate of the ranks (a layout dimension,
// e.g. data parallelism: stride s, degree D): sigma(r) moves r's coordinate c to (c + k) mod D.
// When sigma is an automorphism of the network (every network dimension's coordinate is
// permuted on its own, a Ring's by a rotation), and the workload is the same on r and sigma(r)
// up to renaming ranks (the caller's claim: genie synth emits it so), the whole simulation is
// invariant under the group {sigma^j}: rank sigma^j(r) does at every time what r does, renamed.
// Then only the representatives (c < k) are simulated; a message to a non-representative p is
// delivered to rep(p) as if sent by the representative's image, and every link to the
// representative of its orbit (Topology::set_link_fold), so each link carries what its
// orbit's links carry in the unreduced run (docs/simulation.md, "Symmetry reduction").
// Find() picks the smallest k whose sigma is an automorphism; it says why when none is.
// Plain value after construction; any thread may read.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/sim/topology.h"

namespace genie::sim {

class RankFold {
 public:
  // The smallest k (a divisor of `degree`, below it) for which the rotation by k of the
  // coordinate (stride, degree) is an automorphism of `topology` over `world` ranks. An error
  // (kUnsupported) saying why when there is none: the caller simulates every rank.
  static Result<RankFold> Find(const Topology& topology, int world, int stride, int degree);

  int world() const { return world_; }
  int copies() const { return degree_ / k_; }  // ranks per orbit (the group's order)
  int representatives() const { return world_ / copies(); }
  int step() const { return k_; }
  bool IsRep(int rank) const { return Coord(rank) < k_; }
  int Orbit(int rank) const { return Coord(rank) / k_; }  // j: rank = sigma^j(rep(rank))
  int Rep(int rank) const { return Shift(rank, -Orbit(rank)); }
  // sigma^j(rank), j any integer.
  int Shift(int rank, int j) const {
    const int c = Coord(rank);
    int to = (c + j % copies() * k_) % degree_;
    if (to < 0) to += degree_;
    return rank + (to - c) * stride_;
  }
  // Every link's representative: the link sigma^-j maps it to, j the orbit of its NPU end
  // (the sender's for a link between NPUs). For Topology::set_link_fold.
  Result<std::vector<int>> LinkFold(const Topology& topology) const;
  std::string Describe() const;  // "2 copies of 512 ranks (rotation by 8 of a coordinate ...)"

 private:
  int Coord(int rank) const { return rank / stride_ % degree_; }
  int world_ = 0, stride_ = 1, degree_ = 1, k_ = 1;
};

// Whether the rotation (stride, degree, k) of the ranks maps every group of `groups` (member
// lists in group order) whose members lie in more than one orbit onto itself, its members
// rotated in order (a ring over it then turns into the same ring). Errors name the group.
Status CheckGroupsFold(const RankFold& fold, const std::vector<std::vector<int>>& groups);

}  // namespace genie::sim
