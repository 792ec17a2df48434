#include "genie/collective/planner.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "genie/collective/geometry.h"
#include "genie/collective/hierarchy.h"
#include "genie/collective/phase.h"
#include "genie/common/wire_limits.h"

namespace genie::collective {
namespace internal {

// Rooted collectives and barrier borrow the nearest shape an algorithm family has
// (docs/algorithms.md, "Which algorithm runs").
Algorithm EffectiveAlgorithm(CollectiveType op, Algorithm a) {
  switch (a) {
    case Algorithm::kOneRing: a = Algorithm::kRing; break;
    case Algorithm::kOneDirect: a = Algorithm::kDirect; break;
    case Algorithm::kOneHalvingDoubling: a = Algorithm::kHalvingDoubling; break;
    default: break;
  }
  switch (op) {
    case CollectiveType::kGather:
    case CollectiveType::kScatter:
      return Algorithm::kDirect;
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      if (a == Algorithm::kHalvingDoubling || a == Algorithm::kDoubleBinaryTree ||
          a == Algorithm::kNcclDoubleBinaryTree) {
        return Algorithm::kTree;
      }
      if (a == Algorithm::kPairwise) return Algorithm::kDirect;
      return a;
    case CollectiveType::kBarrier:
      return a == Algorithm::kPairwise ? Algorithm::kDirect : a;
    default:
      return a;
  }
}

Status BuildPhase(const PhaseSpec& p, PhaseBuilder* b) {
  switch (p.algorithm) {
    case Algorithm::kRing: return BuildRing(p, b);
    case Algorithm::kDirect: return BuildDirect(p, b);
    case Algorithm::kHalvingDoubling: return BuildHalvingDoubling(p, b);
    case Algorithm::kDoubleBinaryTree:
    case Algorithm::kNcclDoubleBinaryTree: return BuildDoubleBinaryTree(p, b);
    case Algorithm::kPairwise: return BuildPairwise(p, b);
    case Algorithm::kTree: return BuildTree(p, b);
    case Algorithm::kCustom: return BuildCustom(p, b);
    default: return UnsupportedFor(p);
  }
}

void PrependCopies(const std::vector<LocalCopy>& copies, std::vector<LogicalStep>* steps) {
  const uint32_t k = static_cast<uint32_t>(copies.size());
  for (LogicalStep& s : *steps) {
    for (uint32_t& d : s.deps) d += k;
  }
  std::vector<LogicalStep> out;
  out.reserve(steps->size() + k);
  for (const LocalCopy& c : copies) {
    LogicalStep s;
    s.kind = StepKind::kCopy;
    s.send = c.from;
    s.recv = c.to;
    out.push_back(s);
  }
  out.insert(out.end(), steps->begin(), steps->end());
  *steps = std::move(out);
}

namespace {

Status Validate(const CollectiveSpec& spec, int group_index) {
  const int n = static_cast<int>(spec.group.size());
  if (n == 0) return Status::InvalidArgument("collective has an empty rank group");
  if (group_index < 0 || group_index >= n) {
    return Status::InvalidArgument("group index " + std::to_string(group_index) +
                                   " is outside the group of " + std::to_string(n) + " ranks");
  }
  std::unordered_set<int> seen;
  for (int r : spec.group) {
    if (r < 0) return Status::InvalidArgument("rank group holds negative rank " + std::to_string(r));
    if (!seen.insert(r).second) {
      return Status::InvalidArgument("rank " + std::to_string(r) +
                                     " appears twice in the collective's rank group");
    }
  }
  const PlanOptions& o = spec.options;
  if (o.chunks < 1) return Status::InvalidArgument("preferred-dataset-splits must be >= 1");
  if (o.channels < 1 || o.channels > 65535) {
    return Status::InvalidArgument("channels must be in [1, 65535], got " +
                                   std::to_string(o.channels));
  }
  if (o.algorithms.empty()) return Status::InvalidArgument("no collective algorithm given");
  if (spec.root < 0 || spec.root >= n) {
    return Status::InvalidArgument("root (group index) " + std::to_string(spec.root) +
                                   " is outside the group of " + std::to_string(n) + " ranks");
  }
  return Status::Ok();
}

struct Piece {
  ByteRange range;
  uint16_t channel;
};

// Channels split a message into C near-equal parts (one per flow); slices then cut each part
// into messages of at most `slice` bytes — and never more than one frame carries.
std::vector<Piece> Pieces(ByteRange r, int channels, Bytes slice) {
  if (slice == 0 || slice > kMaxWireMessageBytes) slice = kMaxWireMessageBytes;
  std::vector<Piece> out;
  for (int c = 0; c < channels; ++c) {
    const ByteRange part = SplitPart(r, channels, c);
    int count = 1;
    if (slice > 0 && part.length > slice) {
      count = static_cast<int>((part.length + slice - 1) / slice);
    }
    for (int i = 0; i < count; ++i) {
      out.push_back({SplitPart(part, count, i), static_cast<uint16_t>(c)});
    }
  }
  return out;
}

ByteRange Touched(const LogicalStep& s) {
  return HasRecv(s.kind) || s.kind == StepKind::kCopy ? s.recv : s.send;
}

bool Overlap(ByteRange a, ByteRange b) {
  return a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

// Byte-range hazards inside one phase: a step that writes bytes waits for the earlier steps
// that read or wrote them, a step that reads waits for their last writer. Reductions into the
// same bytes commute, so they do not wait for each other. With these, slices and channels may
// split steps freely: correctness never rests on the algorithm's coarser dependencies.
class Hazards {
 public:
  enum class Access { kRead, kWrite, kReduce };
  void Touch(ByteRange r, Access a, uint32_t step, std::vector<uint32_t>* deps) {
    if (r.length == 0) return;
    SplitAt(r.offset);
    SplitAt(r.offset + r.length);
    for (auto it = segs_.find(r.offset); it != segs_.end() && it->first < r.offset + r.length;
         ++it) {
      Seg& sg = it->second;
      switch (a) {
        case Access::kRead:
          deps->insert(deps->end(), sg.writers.begin(), sg.writers.end());
          sg.readers.push_back(step);
          break;
        case Access::kWrite:
          deps->insert(deps->end(), sg.writers.begin(), sg.writers.end());
          deps->insert(deps->end(), sg.readers.begin(), sg.readers.end());
          sg.writers = {step};
          sg.reducing = false;
          sg.readers.clear();
          break;
        case Access::kReduce:
          deps->insert(deps->end(), sg.readers.begin(), sg.readers.end());
          if (!sg.reducing) {
            deps->insert(deps->end(), sg.writers.begin(), sg.writers.end());
            sg.writers.clear();
            sg.reducing = true;
          }
          sg.writers.push_back(step);
          break;
      }
    }
  }

 private:
  struct Seg {
    Bytes end = 0;
    std::vector<uint32_t> writers;  // one copy-writer, or concurrent reducers
    bool reducing = false;
    std::vector<uint32_t> readers;  // since the writers
  };
  void SplitAt(Bytes x) {
    auto it = segs_.upper_bound(x);
    if (it != segs_.begin()) {
      --it;
      if (it->first < x && it->second.end > x) {
        Seg right = it->second;
        it->second.end = x;
        segs_[x] = std::move(right);
        return;
      }
      if (it->first == x) return;
    }
    // x falls in a gap: open an empty segment up to the next one (or far away).
    auto next = segs_.upper_bound(x);
    const Bytes end = next == segs_.end() ? ~Bytes{0} : next->first;
    if (end > x) segs_[x] = Seg{end, {}, false, {}};
  }
  std::map<Bytes, Seg> segs_;
};

// Lowers the phases of one chunk. Tags count per peer within the chunk and interleave the
// chunks (tag = count * chunks + chunk), so a chunk can be planned on its own (PlanChunk) and
// still carry the tags Plan gives it: unique per ordered pair across the whole collective.
class Lowerer {
 public:
  Lowerer(const CollectiveSpec& spec, Schedule* out, uint32_t chunk)
      : spec_(spec),
        out_(out),
        chunk_(chunk),
        chunks_(static_cast<uint32_t>(std::max(1, spec.options.chunks))) {}

  Status Lower(const PhaseSpec& p, const std::vector<LogicalStep>& steps) {
    const uint32_t chunk = chunk_;
    Phase phase;
    phase.chunk = chunk;
    phase.dim = p.dim;
    phase.op = p.op;
    phase.begin = static_cast<uint32_t>(out_->steps.size());
    // first[i]..first[i]+count[i]: the lowered pieces of logical step i (relative to phase).
    std::vector<uint32_t> first(steps.size()), count(steps.size());
    std::vector<std::vector<Piece>> pieces(steps.size());
    Hazards hazards;
    std::vector<uint32_t> deps;  // reused: one allocation per phase, not per step
    for (size_t i = 0; i < steps.size(); ++i) {
      const LogicalStep& s = steps[i];
      const bool copy = s.kind == StepKind::kCopy;
      // A local copy is one step whatever the channels and slices: no message carries it.
      pieces[i] = copy ? std::vector<Piece>{{s.recv, 0}}
                       : Pieces(Touched(s), s.channel >= 0 ? 1 : spec_.options.channels,
                                spec_.options.slice_bytes);
      if (s.channel >= 0) {
        for (Piece& pc : pieces[i]) pc.channel = static_cast<uint16_t>(s.channel);
      }
      first[i] = static_cast<uint32_t>(out_->steps.size()) - phase.begin;
      count[i] = static_cast<uint32_t>(pieces[i].size());
      for (size_t q = 0; q < pieces[i].size(); ++q) {
        const Piece& pc = pieces[i][q];
        Step st;
        st.kind = s.kind;
        st.charge = s.charge;
        st.channel = pc.channel;
        if (HasSend(s.kind)) {
          st.send_peer = p.members[static_cast<size_t>(s.send_to)];
          st.send = pc.range;
          GENIE_ASSIGN_OR_RETURN(st.send_tag, NextTag(send_tags_, st.send_peer));
        }
        if (HasRecv(s.kind)) {
          st.recv_peer = p.members[static_cast<size_t>(s.recv_from)];
          st.recv = pc.range;
          GENIE_ASSIGN_OR_RETURN(st.recv_tag, NextTag(recv_tags_, st.recv_peer));
        }
        deps.clear();
        for (uint32_t d : s.deps) AddDeps(pc, q, pieces[d], first[d], count[d], &deps);
        const uint32_t self = static_cast<uint32_t>(out_->steps.size()) - phase.begin;
        if (copy) {
          st.send = s.send;
          st.recv = s.recv;
          hazards.Touch(s.send, Hazards::Access::kRead, self, &deps);
        }
        switch (s.kind) {
          case StepKind::kSend:
            hazards.Touch(pc.range, Hazards::Access::kRead, self, &deps);
            break;
          case StepKind::kRecvReduce:
            hazards.Touch(pc.range, Hazards::Access::kReduce, self, &deps);
            break;
          default:
            hazards.Touch(pc.range, Hazards::Access::kWrite, self, &deps);
            break;
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        for (uint32_t& d : deps) d += phase.begin;
        st.deps.assign(deps.begin(), deps.end());
        out_->steps.push_back(std::move(st));
      }
    }
    phase.end = static_cast<uint32_t>(out_->steps.size());
    out_->phases.push_back(phase);
    return Status::Ok();
  }

 private:
  // Piece q waits for the pieces of the dependency that touch the same bytes (so slices
  // pipeline); for an ordering-only dependency (no shared bytes) it waits for the piece in
  // the same position (same channel and slice), or for all of them when the shapes differ.
  static void AddDeps(const Piece& pc, size_t q, const std::vector<Piece>& dep, uint32_t first,
                      uint32_t count, std::vector<uint32_t>* out) {
    bool any = false;
    if (pc.range.length > 0) {
      // Pieces are sorted by offset: binary search the first that may overlap.
      auto it = std::lower_bound(dep.begin(), dep.end(), pc.range.offset,
                                 [](const Piece& a, Bytes off) {
                                   return a.range.offset + a.range.length <= off;
                                 });
      for (; it != dep.end() && it->range.offset < pc.range.offset + pc.range.length; ++it) {
        if (Overlap(it->range, pc.range)) {
          out->push_back(first + static_cast<uint32_t>(it - dep.begin()));
          any = true;
        }
      }
    }
    if (any) return;
    if (dep.size() == count && q < count && count > 0) {
      // Same shape: pair by position.
      out->push_back(first + static_cast<uint32_t>(q));
      return;
    }
    for (uint32_t i = 0; i < count; ++i) out->push_back(first + i);
  }

  Result<uint32_t> NextTag(std::unordered_map<int, uint32_t>& counts, int peer) const {
    const uint64_t tag = uint64_t{counts[peer]++} * chunks_ + chunk_;
    if (tag > 0xffffffffull) {
      return Status::InvalidArgument(
          "more messages to or from rank " + std::to_string(peer) +
          " than a collective's 32-bit tags can number; use a larger --slice or fewer "
          "preferred-dataset-splits");
    }
    return static_cast<uint32_t>(tag);
  }

  const CollectiveSpec& spec_;
  Schedule* out_;
  uint32_t chunk_;
  uint32_t chunks_;
  std::unordered_map<int, uint32_t> send_tags_, recv_tags_;
};

}  // namespace

std::vector<PhaseSpec> ChunkPhases(const Effective& e, int chunk) {
  const CollectiveSpec& spec = e.spec;
  if (Hierarchical(e)) return HierarchicalPhases(e, chunk);
  // Everything else runs over the (involved) group as one dimension.
  const ChunkGeometry g = Geometry(spec, e.index, chunk);
  PhaseSpec p;
  p.op = spec.type;
  p.algorithm = EffectiveAlgorithm(spec.type, spec.options.algorithms[0]);
  p.direct_window = spec.options.direct_window;
  p.members = spec.group;
  p.me = e.index;
  p.root = spec.root;
  p.region = spec.type == CollectiveType::kBarrier ? ByteRange{0, 0} : g.region;
  p.blocks = g.blocks;
  p.recv_blocks = g.recv_blocks;
  p.order = BlockOrder(p.algorithm, static_cast<int>(spec.group.size()));
  p.dim = static_cast<uint16_t>(e.dim_ids.front());
  p.custom = e.custom;
  return {p};
}

}  // namespace internal

namespace {

// Plan and PlanChunk: the chunks in [first, last), appended to one schedule.
Result<Schedule> PlanChunks(const CollectiveSpec& spec, int group_index, int first, int last) {
  GENIE_RETURN_IF_ERROR(internal::Validate(spec, group_index));
  GENIE_ASSIGN_OR_RETURN(internal::Effective e, internal::MakeEffective(spec, group_index));
  Schedule out;
  out.rank = spec.group[static_cast<size_t>(group_index)];
  out.group_index = group_index;
  out.buffer_bytes = internal::EffectiveBufferBytes(e);
  out.channels = spec.options.channels;
  if (e.custom) out.channels = std::max(out.channels, e.custom->channels);
  internal::PhaseBuilder b;
  for (int k = first; k < last; ++k) {
    internal::Lowerer lower(spec, &out, static_cast<uint32_t>(k));
    for (internal::PhaseSpec& p : internal::ChunkPhases(e, k)) {
      p.stream = spec.options.tree_stream + static_cast<uint32_t>(k);
      b.mutable_steps().clear();
      Status st = internal::BuildPhase(p, &b);
      if (st.ok() && !p.copies.empty()) internal::PrependCopies(p.copies, &b.mutable_steps());
      if (st.ok()) st = lower.Lower(p, b.steps());
      if (!st.ok()) {
        return st.WithContext(std::string("planning ") + CollectiveOpName(spec.type) +
                              " on dimension " + std::to_string(p.dim) + " for rank " +
                              std::to_string(out.rank));
      }
    }
  }
  return out;
}

}  // namespace

Result<Schedule> Plan(const CollectiveSpec& spec, int group_index) {
  return PlanChunks(spec, group_index, 0, spec.options.chunks);
}

Result<Schedule> PlanChunk(const CollectiveSpec& spec, int group_index, int chunk) {
  if (chunk < 0 || chunk >= std::max(1, spec.options.chunks)) {
    return Status::InvalidArgument("chunk " + std::to_string(chunk) + " of a collective in " +
                                   std::to_string(spec.options.chunks) + " chunks");
  }
  return PlanChunks(spec, group_index, chunk, chunk + 1);
}

Result<std::vector<Schedule>> PlanAll(const CollectiveSpec& spec) {
  std::vector<Schedule> all;
  for (size_t i = 0; i < spec.group.size(); ++i) {
    GENIE_ASSIGN_OR_RETURN(Schedule s, Plan(spec, static_cast<int>(i)));
    all.push_back(std::move(s));
  }
  return all;
}

}  // namespace genie::collective
