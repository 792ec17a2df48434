#include "genie/sim/symmetry.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace genie::sim {

// Why the rotation by g.k is not an automorphism of the network, or "" when it is: each
// dimension's coordinate must be permuted on its own (the same way whatever the other
// coordinates), and a Ring's by a rotation (its routes go the shorter way, clockwise on a tie).
std::string RankFold::NotAutomorphism(const Topology& t, const Gen& g, int world) {
  for (int d = 0; d < t.dims(); ++d) {
    std::vector<int> perm(t.size(d), -1);
    for (int r = 0; r < world; ++r) {
      const int a = t.Coordinate(r, d), b = t.Coordinate(Shift(g, r, 1), d);
      if (perm[a] == -1) {
        perm[a] = b;
      } else if (perm[a] != b) {
        return "it moves network dimension " + std::to_string(d) + "'s coordinate " +
               std::to_string(a) + " to " + std::to_string(perm[a]) + " for some ranks and to " +
               std::to_string(b) + " for others";
      }
    }
    if (t.kind(d) == config::TopologyKind::kRing) {
      const int n = t.size(d);
      for (int a = 0; a < n; ++a) {
        if ((perm[a] - a + n) % n != (perm[0] + n) % n) {
          return "it does not rotate network dimension " + std::to_string(d) + " (a Ring)";
        }
      }
    }
  }
  return "";
}

Result<RankFold> RankFold::Find(const Topology& topology, int world,
                                const std::vector<Coordinate>& candidates,
                                std::vector<std::string>* notes) {
  if (world != topology.npus()) {
    return Status::Unsupported("the workload's " + std::to_string(world) +
                               " ranks are not the network's " + std::to_string(topology.npus()) +
                               " NPUs");
  }
  if (topology.has_ecmp_routes()) {
    // Pairs of hosts pinned to spines by a hash: rotating the hosts does not rotate the hash.
    return Status::Unsupported("network.yml ecmp_routes pins pairs of hosts to spines "
                               "(a hash is not rotation-symmetric)");
  }
  if (topology.leaf_spine()) {
    for (int id = topology.num_links() - 1; id >= 0 && topology.IsSpineLink(id); --id) {
      if (topology.link_burst_bytes(id) > 0) {
        // A fabric link's bucket is drawn flow by flow: its copies would not share it alike.
        return Status::Unsupported("the fabric's links are shaped (network.yml burst)");
      }
    }
  }
  RankFold f;
  f.world_ = world;
  std::string why;
  for (const Coordinate& c : candidates) {
    if (c.degree < 2 || c.stride < 1 || int64_t{c.stride} * c.degree > world) continue;
    bool found = false;
    for (int k = 1; k < c.degree && !found; ++k) {
      if (c.degree % k != 0) continue;
      const Gen g{c.stride, c.degree, k, c.name};
      const std::string no = NotAutomorphism(topology, g, world);
      if (no.empty()) {
        f.gens_.push_back(g);
        f.copies_ *= c.degree / k;
        found = true;
      } else if (k == 1) {
        why = c.name + " (rotating it by 1: " + no + ")";
      }
    }
    if (!found && notes != nullptr) {
      notes->push_back("no rotation of " + c.name + " is a symmetry of the network");
    }
  }
  if (f.gens_.empty()) {
    return Status::Unsupported("no rotation of the replicas is a symmetry of the network: " + why);
  }
  return f;
}

Result<std::vector<int>> RankFold::LinkFold(const Topology& t) const {
  // A fabric link (leaf-spine, spine-super-spine; after every NPU's) moves with its leaf or pod:
  // its representative is the same link of the least leaf (pod) of that leaf's (pod's) orbit.
  // The group permutes each dimension's coordinate on its own (Find), so it maps leaves to
  // leaves, pods to pods and spine s of a pod to spine s of the image, and fixes super-spines.
  int links = t.num_links();
  while (links > 0 && t.IsSpineLink(links - 1)) --links;
  std::vector<int> fold(t.num_links());
  std::map<std::pair<bool, int>, int> owner_rep;  // (super, leaf or pod) -> least of its orbit
  for (int id = links; id < t.num_links(); ++id) {
    const bool super = t.IsSuperLink(id);
    const auto [it, fresh] = owner_rep.try_emplace({super, t.FabricLinkOwner(id)}, 0);
    if (fresh) {
      const int npu = t.FabricOwnerNpu(id);
      int least = super ? t.Pod(npu) : t.Leaf(npu);
      for (int j = 1; j < copies_; ++j) {
        const int image = Image(npu, j);
        least = std::min(least, super ? t.Pod(image) : t.Leaf(image));
      }
      it->second = least;
    }
    fold[id] = t.MoveFabricLink(id, it->second);
  }
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
  for (int id = 0; id < links; ++id) {
    const Topology::LinkInfo l = t.link(id);
    const bool from_npu = l.from_device < t.npus(), to_npu = l.to_device < t.npus();
    const int npu = from_npu ? l.from_device : l.to_device;
    if (from_npu && to_npu) {
      fold[id] = between.at(std::tuple{l.dim, ToRep(npu, l.from_device), ToRep(npu, l.to_device)});
    } else {
      fold[id] = to_switch.at(std::tuple{l.dim, Rep(npu), from_npu});
    }
  }
  return fold;
}

std::string RankFold::Describe() const {
  std::string how;
  for (const Gen& g : gens_) {
    how += (how.empty() ? "" : ", ") + g.name + " folded " + std::to_string(g.degree / g.k) +
           (g.k > 1 ? " ways (every " + std::to_string(g.k) + "th)" : " ways");
  }
  return std::to_string(representatives()) + " representative ranks stand for " +
         std::to_string(world_) + " (" + std::to_string(copies_) + " copies: " + how + ")";
}

Status RankFold::CheckGroups(const std::vector<std::vector<int>>& groups) const {
  for (const std::vector<int>& g : groups) {
    for (const Gen& gen : gens_) {
      bool spans = false;
      for (int r : g) spans = spans || Coord(gen, r) / gen.k != Coord(gen, g[0]) / gen.k;
      if (!spans) continue;
      const size_t n = g.size();
      size_t s = 0;
      while (s < n && g[s] != Shift(gen, g[0], 1)) ++s;
      bool rotated = s < n;
      for (size_t i = 0; rotated && i < n; ++i) rotated = Shift(gen, g[i], 1) == g[(i + s) % n];
      if (!rotated) {
        std::string members;
        for (size_t i = 0; i < n && i < 8; ++i) members += (i ? "," : "") + std::to_string(g[i]);
        return Status::Unsupported("group [" + members + (n > 8 ? ",..." : "") + "] spans " +
                                   gen.name + " copies but is not rotated onto itself");
      }
    }
  }
  return Status::Ok();
}

}  // namespace genie::sim
