#include "genie/sim/symmetry.h"

#include <map>
#include <tuple>

namespace genie::sim {
namespace {

// Why the rotation by k is not an automorphism of the network, or "" when it is: each
// dimension's coordinate must be permuted on its own (the same way whatever the other
// coordinates), and a Ring's by a rotation (its routes go the shorter way, clockwise on a tie).
std::string NotAutomorphism(const Topology& t, const RankFold& f, int world) {
  for (int d = 0; d < t.dims(); ++d) {
    std::vector<int> perm(t.size(d), -1);
    for (int r = 0; r < world; ++r) {
      const int a = t.Coordinate(r, d), b = t.Coordinate(f.Shift(r, 1), d);
      if (perm[a] == -1) {
        perm[a] = b;
      } else if (perm[a] != b) {
        return "it moves dimension " + std::to_string(d) + "'s coordinate " + std::to_string(a) +
               " to " + std::to_string(perm[a]) + " for some ranks and to " + std::to_string(b) +
               " for others (the rotated coordinate is split across network dimensions)";
      }
    }
    if (t.kind(d) == config::TopologyKind::kRing) {
      const int n = t.size(d);
      for (int a = 0; a < n; ++a) {
        if ((perm[a] - a + n) % n != (perm[0] + n) % n) {
          return "it does not rotate dimension " + std::to_string(d) + " (a Ring)";
        }
      }
    }
  }
  return "";
}

}  // namespace

Result<RankFold> RankFold::Find(const Topology& topology, int world, int stride, int degree) {
  if (world != topology.npus()) {
    return Status::Unsupported("the workload's " + std::to_string(world) +
                               " ranks are not the network's " + std::to_string(topology.npus()) +
                               " NPUs");
  }
  if (topology.leaf_spine()) {
    return Status::Unsupported("a leaf-spine fabric (network.yml spines) is not folded yet");
  }
  if (degree < 2 || stride < 1 || int64_t{stride} * degree > world) {
    return Status::Unsupported("no coordinate of degree 2 or more to rotate");
  }
  std::string why;
  for (int k = 1; k < degree; ++k) {
    if (degree % k != 0) continue;
    RankFold f;
    f.world_ = world;
    f.stride_ = stride;
    f.degree_ = degree;
    f.k_ = k;
    why = NotAutomorphism(topology, f, world);
    if (why.empty()) return f;
    if (k == 1) why = "rotating by 1: " + why;
  }
  return Status::Unsupported("no rotation of the replicas is a symmetry of the network: " + why);
}

Result<std::vector<int>> RankFold::LinkFold(const Topology& t) const {
  const int links = t.num_links();
  // A link is named by (dim, from, to); an NPU's link into or out of a switch by (dim, npu, up).
  std::map<std::tuple<int, int, int>, int> between;
  std::map<std::tuple<int, int, bool>, int> to_switch;
  for (int id = 0; id < links; ++id) {
    const Topology::LinkInfo l = t.link(id);
    const bool from_npu = l.from_device < t.npus(), to_npu = l.to_device < t.npus();
    bool fresh = true;
    if (from_npu && to_npu) {
      fresh = between.emplace(std::tuple{l.dim, l.from_device, l.to_device}, id).second;
    } else if (from_npu || to_npu) {
      fresh = to_switch
                  .emplace(std::tuple{l.dim, from_npu ? l.from_device : l.to_device, from_npu},
                           id)
                  .second;
    } else {
      return Status::Unsupported(t.LinkName(id) + " joins two switches");
    }
    if (!fresh) return Status::Unsupported(t.LinkName(id) + " has a twin between the same devices");
  }
  std::vector<int> fold(links);
  for (int id = 0; id < links; ++id) {
    const Topology::LinkInfo l = t.link(id);
    const bool from_npu = l.from_device < t.npus(), to_npu = l.to_device < t.npus();
    const int npu = from_npu ? l.from_device : l.to_device;
    const int back = -Orbit(npu);
    if (from_npu && to_npu) {
      fold[id] = between.at(std::tuple{l.dim, Shift(l.from_device, back), Shift(l.to_device, back)});
    } else {
      fold[id] = to_switch.at(std::tuple{l.dim, Shift(npu, back), from_npu});
    }
  }
  return fold;
}

std::string RankFold::Describe() const {
  return std::to_string(representatives()) + " representative ranks stand for " +
         std::to_string(world_) + " (" + std::to_string(copies()) +
         " copies: ranks whose coordinate of stride " + std::to_string(stride_) + " (degree " +
         std::to_string(degree_) + ") differs by a multiple of " + std::to_string(k_) + ")";
}

Status CheckGroupsFold(const RankFold& fold, const std::vector<std::vector<int>>& groups) {
  for (const std::vector<int>& g : groups) {
    bool spans = false;
    for (int r : g) spans = spans || fold.Orbit(r) != fold.Orbit(g[0]);
    if (!spans) continue;
    const size_t n = g.size();
    size_t s = 0;
    while (s < n && g[s] != fold.Shift(g[0], 1)) ++s;
    bool rotated = s < n;
    for (size_t i = 0; rotated && i < n; ++i) rotated = fold.Shift(g[i], 1) == g[(i + s) % n];
    if (!rotated) {
      std::string members;
      for (size_t i = 0; i < n && i < 8; ++i) members += (i ? "," : "") + std::to_string(g[i]);
      return Status::Unsupported("group [" + members + (n > 8 ? ",..." : "") +
                                 "] spans copies but is not rotated onto itself");
    }
  }
  return Status::Ok();
}

}  // namespace genie::sim
