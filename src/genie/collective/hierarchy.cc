#include "genie/collective/hierarchy.h"

#include <algorithm>
#include <string>

#include "genie/collective/custom.h"
#include "genie/collective/geometry.h"

namespace genie::collective::internal {

std::vector<int> Digits(int g, const std::vector<int>& dims) {
  std::vector<int> d;
  for (int n : dims) {
    d.push_back(g % n);
    g /= n;
  }
  return d;
}

int Stride(const std::vector<int>& dims, size_t d) {
  int s = 1;
  for (size_t i = 0; i < d; ++i) s *= dims[i];
  return s;
}

namespace {

bool IsFlatName(Algorithm a) {
  return a == Algorithm::kOneRing || a == Algorithm::kOneDirect ||
         a == Algorithm::kOneHalvingDoubling || a == Algorithm::kCustom;
}

// Members of dimension d's group around member g (global ranks, index = digit d).
std::vector<int> DimMembers(const Effective& e, int g, size_t d) {
  const std::vector<int>& dims = e.spec.options.dims;
  const int stride = Stride(dims, d);
  const int digit = (g / stride) % dims[d];
  std::vector<int> out;
  for (int j = 0; j < dims[d]; ++j) {
    out.push_back(e.spec.group[static_cast<size_t>(g + (j - digit) * stride)]);
  }
  return out;
}

Algorithm DimAlgorithm(const Effective& e, size_t d) {
  const auto& algs = e.spec.options.algorithms;
  return algs.size() == 1 ? algs[0] : algs[d];
}

// Splits `region` among the n members of dimension d, laid out in the algorithm's order.
std::vector<ByteRange> DimBlocks(const Effective& e, size_t d, ByteRange region, bool equal) {
  const int n = e.spec.options.dims[d];
  std::vector<Bytes> sizes;
  for (int j = 0; j < n; ++j) {
    sizes.push_back(equal ? region.length / static_cast<Bytes>(n)
                          : SplitPart({0, region.length}, n, j).length);
  }
  return PlaceBlocks(region.offset, sizes,
                     BlockOrder(EffectiveAlgorithm(e.spec.type, DimAlgorithm(e, d)), n));
}

ByteRange ChunkRegion(const Effective& e, int chunk) {
  const ByteRange c = SplitPart({0, e.spec.size}, std::max(1, e.spec.options.chunks), chunk);
  if (e.spec.type == CollectiveType::kAllGather) {
    const Bytes n = e.spec.group.size();
    return {n * c.offset, n * c.length};
  }
  return c;
}

// Themis (Rashidi et al., "Themis: a network bandwidth-aware collective scheduling policy",
// ISCA 2022), genie's own implementation of the published policy: a running load per
// dimension — the time the chunks planned so far keep it busy, bytes x (n-1)/n over its
// bandwidth for every reduce-scatter (or mirrored all-gather) phase — and each chunk visits
// the least loaded dimension first (that phase carries the chunk's most bytes), then the next
// least loaded, ... Ties go to the lower dimension. Loads start at zero for every collective,
// and every rank derives the same orders from the spec alone: no rank has to ask another.
// Returns the reduce-scatter order of `chunk` (indices into e.spec.options.dims).
std::vector<size_t> ThemisOrder(const Effective& e, int chunk) {
  const std::vector<int>& dims = e.spec.options.dims;
  const std::vector<double>& bw = e.spec.options.dim_bandwidth;
  const size_t D = dims.size();
  std::vector<double> load(D, 0.0);
  std::vector<size_t> order(D);
  for (int k = 0; k <= chunk; ++k) {
    for (size_t d = 0; d < D; ++d) order[d] = d;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return load[a] < load[b]; });
    double bytes = static_cast<double>(ChunkRegion(e, k).length);
    for (size_t d : order) {
      const double n = dims[d];
      const double rate = bw.size() == D && bw[d] > 0 ? bw[d] : 1.0;
      load[d] += bytes * (n - 1) / n / rate;
      bytes /= n;
    }
  }
  return order;
}

bool UsesThemis(const Effective& e) {
  return e.spec.options.inter_dim == InterDimScheduling::kThemis && e.spec.options.dims.size() > 1;
}

// The dimensions of a chunk's phases, in the order they run: dimension 0 first (baseline), or
// themis's order. All-gather runs it backwards, as ASTRA-sim's generate_collective reverses its
// dimension map for all-gather: the last dimension first, dimension 0 (or themis's least loaded
// one) last, on the most bytes.
std::vector<size_t> PhaseOrder(const Effective& e, int chunk) {
  const size_t D = e.spec.options.dims.size();
  std::vector<size_t> order(D);
  for (size_t d = 0; d < D; ++d) order[d] = d;
  if (UsesThemis(e)) order = ThemisOrder(e, chunk);
  if (e.spec.type == CollectiveType::kAllGather) std::reverse(order.begin(), order.end());
  return order;
}

// Nesting of the blocks, outermost dimension first: reduce-scatter (and all-reduce's
// localBWAware) cut the dimension of the first phase first; all-gather cuts the dimension of
// its last phase first, so that its first phase gathers the innermost, contiguous blocks.
std::vector<size_t> NestOrder(const Effective& e, int chunk) {
  std::vector<size_t> order = PhaseOrder(e, chunk);
  if (e.spec.type == CollectiveType::kAllGather) std::reverse(order.begin(), order.end());
  return order;
}

}  // namespace

PhaseSpec DimPhase(const Effective& e, size_t d, CollectiveType op) {
  PhaseSpec p;
  p.op = op;
  p.algorithm = EffectiveAlgorithm(op, DimAlgorithm(e, d));
  p.direct_window = e.spec.options.direct_window;
  p.members = DimMembers(e, e.index, d);
  p.me = (e.index / Stride(e.spec.options.dims, d)) % e.spec.options.dims[d];
  p.order = BlockOrder(p.algorithm, p.n());
  p.dim = static_cast<uint16_t>(e.dim_ids[d]);
  return p;
}

bool Hierarchical(const Effective& e) {
  if (e.custom) return false;
  const CollectiveType op = e.spec.type;
  if (op == CollectiveType::kAllToAll) return !e.flat;
  return op == CollectiveType::kAllReduce || op == CollectiveType::kReduceScatter ||
         op == CollectiveType::kReduceScatterBlock || op == CollectiveType::kAllGather;
}

Result<Effective> MakeEffective(const CollectiveSpec& spec, int group_index) {
  Effective e;
  e.spec = spec;
  e.index = group_index;
  const int n = static_cast<int>(spec.group.size());
  PlanOptions& o = e.spec.options;
  std::vector<int> dims = spec.options.dims.empty() ? std::vector<int>{n} : spec.options.dims;
  long long product = 1;
  for (int d : dims) {
    if (d < 1) return Status::InvalidArgument("topology dimension of size " + std::to_string(d));
    product *= d;
  }
  if (product != n) {
    std::string shape;
    for (int d : dims) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    return Status::InvalidArgument("topology " + shape + " holds " + std::to_string(product) +
                                   " ranks but the collective's group has " + std::to_string(n) +
                                   "; give --topology/npus_count that multiply to the group size");
  }
  if (!o.algorithms.empty() && o.algorithms.size() != 1 && o.algorithms.size() != dims.size()) {
    return Status::InvalidArgument(std::to_string(o.algorithms.size()) + " algorithms given for " +
                                   std::to_string(dims.size()) +
                                   " dimensions (give one, or one per dimension)");
  }
  std::vector<bool> involved = spec.options.involved_dim;
  if (!involved.empty() && involved.size() != dims.size()) {
    return Status::InvalidArgument("involved_dim lists " + std::to_string(involved.size()) +
                                   " dimensions, the topology has " + std::to_string(dims.size()));
  }
  if (involved.empty()) involved.assign(dims.size(), true);
  // The subgroup: ranks that share this rank's digits in the dimensions not involved.
  const std::vector<int> mine = Digits(group_index, dims);
  std::vector<int> sub_dims, ids;
  std::vector<Algorithm> sub_algs;
  std::vector<double> sub_bw;
  const bool have_bw = spec.options.dim_bandwidth.size() == dims.size();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!involved[d]) continue;
    sub_dims.push_back(dims[d]);
    ids.push_back(static_cast<int>(d));
    if (o.algorithms.size() > 1) sub_algs.push_back(o.algorithms[d]);
    if (have_bw) sub_bw.push_back(spec.options.dim_bandwidth[d]);
  }
  if (o.algorithms.size() <= 1) sub_algs = o.algorithms;
  const std::vector<int> root_digits = Digits(std::clamp(spec.root, 0, n - 1), dims);
  std::vector<int> group;
  int index = -1;
  int root = 0;
  for (int g = 0; g < n; ++g) {
    const std::vector<int> dg = Digits(g, dims);
    bool same = true;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (!involved[d] && dg[d] != mine[d]) same = false;
    }
    if (!same) continue;
    if (g == group_index) index = static_cast<int>(group.size());
    // The root of this subgroup: the member whose involved digits are the root's.
    bool is_root = true;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (involved[d] && dg[d] != root_digits[d]) is_root = false;
    }
    if (is_root) root = static_cast<int>(group.size());
    group.push_back(spec.group[static_cast<size_t>(g)]);
  }
  if (sub_dims.empty()) {  // no dimension involved: a group of one
    sub_dims = {1};
    ids = {0};
    if (sub_algs.empty()) sub_algs = {Algorithm::kRing};
  }
  e.spec.group = group;
  e.spec.root = root;
  e.index = index;
  o.dims = sub_dims;
  o.algorithms = sub_algs;
  o.dim_bandwidth = sub_bw;
  o.involved_dim.clear();
  e.dim_ids = ids;
  e.flat = sub_dims.size() == 1 || (!o.algorithms.empty() && IsFlatName(o.algorithms[0]));
  // An all-to-all skips dimensions of one member (as ASTRA-sim does): on one that is left it
  // is the flat all-to-all, with that dimension's algorithm.
  size_t first = 0;
  if (spec.type == CollectiveType::kAllToAll && !e.flat) {
    const std::vector<size_t> active = AllToAllPhaseDims(sub_dims);
    if (active.size() <= 1) {
      e.flat = true;
      if (!active.empty()) first = active.front();
    }
  }
  if (!o.algorithms.empty() && o.algorithms[0] == Algorithm::kCustom) {
    if (!spec.options.custom) {
      return Status::InvalidArgument(
          "the custom algorithm was chosen but none was loaded: name "
          "its file with genie plan --custom, or in system.json's "
          "<collective>-implementation-custom");
    }
    GENIE_RETURN_IF_ERROR(
        CheckCustomFits(*spec.options.custom, spec.type, static_cast<int>(group.size())));
    e.custom = spec.options.custom;
  }
  if (e.flat) {
    o.dims = {static_cast<int>(group.size())};
    e.dim_ids = {ids[first]};
    if (o.algorithms.size() > 1) o.algorithms = {o.algorithms[first]};
  }
  return e;
}

std::vector<PhaseSpec> HierarchicalPhases(const Effective& e, int chunk) {
  if (e.spec.type == CollectiveType::kAllToAll) return AllToAllPhases(e, chunk);
  const std::vector<int>& dims = e.spec.options.dims;
  const size_t D = dims.size();
  const ByteRange region = ChunkRegion(e, chunk);
  const std::vector<int> mine = Digits(e.index, dims);
  const std::vector<size_t> order = PhaseOrder(e, chunk);
  std::vector<PhaseSpec> out;
  switch (e.spec.type) {
    case CollectiveType::kAllReduce:
      // Themis always splits the all-reduce (the paper's reduce-scatter / all-gather form):
      // whole-chunk all-reduces load every dimension alike, whatever the order.
      if ((e.spec.options.optimization == Optimization::kBaseline && !UsesThemis(e)) || D == 1) {
        for (size_t d : order) {
          PhaseSpec p = DimPhase(e, d, CollectiveType::kAllReduce);
          p.region = region;
          out.push_back(p);
        }
      } else {
        ByteRange cur = region;
        std::vector<PhaseSpec> down;
        for (size_t i = 0; i + 1 < D; ++i) {
          const size_t d = order[i];
          PhaseSpec rs = DimPhase(e, d, CollectiveType::kReduceScatter);
          rs.blocks = DimBlocks(e, d, cur, false);
          PhaseSpec ag = DimPhase(e, d, CollectiveType::kAllGather);
          ag.order = rs.order = BlockOrder(
              EffectiveAlgorithm(CollectiveType::kAllReduce, DimAlgorithm(e, d)), dims[d]);
          // Both halves must lay blocks out alike: the all-gather reuses the cut.
          ag.blocks = rs.blocks;
          out.push_back(rs);
          down.push_back(ag);
          cur = rs.blocks[static_cast<size_t>(mine[d])];
        }
        PhaseSpec top = DimPhase(e, order[D - 1], CollectiveType::kAllReduce);
        top.region = cur;
        out.push_back(top);
        for (auto it = down.rbegin(); it != down.rend(); ++it) out.push_back(*it);
      }
      break;
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather: {
      const bool gather = e.spec.type == CollectiveType::kAllGather;
      // Walk the nesting from the outside in, recording each dimension's cut.
      std::vector<std::vector<ByteRange>> cut(D);
      ByteRange cur = region;
      for (size_t d : NestOrder(e, chunk)) {
        cut[d] = DimBlocks(e, d, cur, gather);
        cur = cut[d][static_cast<size_t>(mine[d])];
      }
      for (size_t d : order) {
        PhaseSpec p = DimPhase(e, d, e.spec.type);
        p.blocks = cut[d];
        out.push_back(p);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

ByteRange NestedBlock(const Effective& e, int g, int chunk) {
  const std::vector<int>& dims = e.spec.options.dims;
  const std::vector<int> digits = Digits(g, dims);
  const bool gather = e.spec.type == CollectiveType::kAllGather;
  ByteRange cur = ChunkRegion(e, chunk);
  for (size_t d : NestOrder(e, chunk))
    cur = DimBlocks(e, d, cur, gather)[static_cast<size_t>(digits[d])];
  return cur;
}

}  // namespace genie::collective::internal
