#include "genie/runtime/compact_chunk.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string_view>

#include "genie/collective/geometry.h"
#include "genie/collective/planner.h"
#include "genie/common/check.h"

namespace genie::runtime {
namespace {

template <typename T>
bool SameBytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename T>
uint64_t HashBytes(const std::vector<T>& v, uint64_t seed) {
  std::string_view bytes(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
  return (seed * 0x9e3779b97f4a7c15ULL) ^ std::hash<std::string_view>()(bytes);
}

uint32_t Delta(int peer, int rank, int world) {
  GENIE_CHECK(peer >= 0 && peer < world)
      << "rank " << rank << ": peer " << peer << " outside the " << world << " ranks";
  return static_cast<uint32_t>(((peer - rank) % world + world) % world);
}

}  // namespace

std::shared_ptr<const PlanKey> RotationKey(const collective::CollectiveSpec& spec, int group_index,
                                           int world) {
  using collective::Algorithm;
  const collective::PlanOptions& o = spec.options;
  const int n = static_cast<int>(spec.group.size());
  if (n == 0 || group_index < 0 || group_index >= n || world <= 0) return nullptr;
  if (o.custom != nullptr || o.algorithms.size() != 1 || o.dims.size() > 1 ||
      o.inter_dim != collective::InterDimScheduling::kBaseline) {
    return nullptr;
  }
  for (bool involved : o.involved_dim) {
    if (!involved) return nullptr;
  }
  using genie::CollectiveType;
  switch (spec.type) {
    case CollectiveType::kAllReduce:
    case CollectiveType::kReduceScatter:
    case CollectiveType::kReduceScatterBlock:
    case CollectiveType::kAllGather:
    case CollectiveType::kAllToAll:
    case CollectiveType::kBroadcast:
    case CollectiveType::kReduce:
      break;
    default:
      return nullptr;
  }
  const Algorithm a = collective::internal::EffectiveAlgorithm(spec.type, o.algorithms[0]);
  if (a != Algorithm::kRing && a != Algorithm::kDirect) return nullptr;
  auto key = std::make_shared<PlanKey>();
  std::vector<uint64_t>& w = key->words;
  w.reserve(24 + static_cast<size_t>(n));
  w.push_back(static_cast<uint64_t>(spec.type));
  w.push_back(spec.size);
  w.push_back(static_cast<uint64_t>(n));
  // The root, relative to the member, for the rooted collectives (the others ignore it).
  const bool rooted =
      spec.type == CollectiveType::kBroadcast || spec.type == CollectiveType::kReduce;
  w.push_back(rooted ? static_cast<uint64_t>(((spec.root - group_index) % n + n) % n) : 0);
  w.push_back(spec.collective_id);
  w.push_back(static_cast<uint64_t>(o.algorithms[0]));
  w.push_back(static_cast<uint64_t>(o.direct_window));
  w.push_back(o.dims.size());
  for (int d : o.dims) w.push_back(static_cast<uint64_t>(d));
  w.push_back(o.involved_dim.size());
  w.push_back(static_cast<uint64_t>(o.optimization));
  w.push_back(o.dim_bandwidth.size());
  for (double b : o.dim_bandwidth) w.push_back(std::bit_cast<uint64_t>(b));
  w.push_back(static_cast<uint64_t>(o.chunks));
  w.push_back(static_cast<uint64_t>(o.active_chunks));
  w.push_back(static_cast<uint64_t>(o.channels));
  w.push_back(o.slice_bytes);
  const int rank = spec.group[static_cast<size_t>(group_index)];
  for (int j = 0; j < n; ++j) {
    const int member = spec.group[static_cast<size_t>((group_index + j) % n)];
    if (member < 0 || member >= world) return nullptr;  // the planner reports it
    w.push_back(Delta(member, rank, world));
  }
  key->hash = HashBytes(w, static_cast<uint64_t>(n));
  return key;
}

bool SharesByRotation(const collective::CollectiveSpec& spec, int chunk) {
  const int n = static_cast<int>(spec.group.size());
  const int chunks = std::max(1, spec.options.chunks);
  if (n == 0 || chunk < 0 || chunk >= chunks) return false;
  const collective::ByteRange c = collective::internal::SplitPart({0, spec.size}, chunks, chunk);
  // SplitPart cuts whole float32 elements when it can, else bytes: equal parts either way.
  const Bytes units = c.length % collective::internal::kElementBytes == 0
                          ? c.length / collective::internal::kElementBytes
                          : c.length;
  return units % static_cast<Bytes>(n) == 0;
}

std::shared_ptr<const PlanKey> ScheduleCache::InternKey(std::shared_ptr<const PlanKey> key) {
  if (key == nullptr) return key;
  auto [begin, end] = keys_.equal_range(key->hash);
  for (auto it = begin; it != end; ++it) {
    std::shared_ptr<const PlanKey> have = it->second.lock();
    if (have != nullptr && *have == *key) return have;
  }
  if (keys_.size() >= sweep_keys_at_) {
    std::erase_if(keys_, [](const auto& entry) { return entry.second.expired(); });
    sweep_keys_at_ = std::max<size_t>(256, 2 * keys_.size());
  }
  keys_.emplace(key->hash, key);
  return key;
}

std::shared_ptr<const CompactChunk> ScheduleCache::Find(const PlanKey& key, uint32_t chunk) {
  const uint64_t h = key.hash ^ (uint64_t{chunk} * 0x9e3779b97f4a7c15ULL);
  auto [begin, end] = keyed_.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    if (it->second.chunk != chunk) continue;
    if (it->second.key.get() != &key && !(*it->second.key == key)) continue;
    std::shared_ptr<const CompactChunk> plan = it->second.plan.lock();
    if (plan == nullptr) {
      keyed_.erase(it);  // every rank that held it has finished it
      return nullptr;
    }
    ++plans_skipped_;
    return plan;
  }
  return nullptr;
}

void ScheduleCache::Remember(std::shared_ptr<const PlanKey> key, uint32_t chunk,
                             const std::shared_ptr<const CompactChunk>& plan) {
  if (keyed_.size() >= sweep_at_) {
    std::erase_if(keyed_, [](const auto& entry) { return entry.second.plan.expired(); });
    sweep_at_ = std::max<size_t>(256, 2 * keyed_.size());
  }
  const uint64_t h = key->hash ^ (uint64_t{chunk} * 0x9e3779b97f4a7c15ULL);
  keyed_.emplace(h, Keyed{std::move(key), chunk, plan});
}

Result<std::shared_ptr<const CompactChunk>> PlanShared(const collective::CollectiveSpec& spec,
                                                       int group_index, int world, uint32_t chunk,
                                                       const std::shared_ptr<const PlanKey>& key,
                                                       ScheduleCache& cache) {
  const bool shared = key != nullptr && SharesByRotation(spec, static_cast<int>(chunk));
  if (shared) {
    if (auto plan = cache.Find(*key, chunk)) return plan;
  }
  GENIE_ASSIGN_OR_RETURN(collective::Schedule s,
                         collective::PlanChunk(spec, group_index, static_cast<int>(chunk)));
  std::shared_ptr<const CompactChunk> plan =
      cache.Intern(Compact(s, spec.group[static_cast<size_t>(group_index)], world, nullptr));
  if (shared) cache.Remember(key, chunk, plan);
  return plan;
}

bool CompactChunk::operator==(const CompactChunk& o) const {
  return hash == o.hash && SameBytes(steps, o.steps) && SameBytes(dependents, o.dependents) &&
         phases.size() == o.phases.size() &&
         std::equal(phases.begin(), phases.end(), o.phases.begin(),
                    [](const PhaseInfo& a, const PhaseInfo& b) {
                      return a.begin == b.begin && a.end == b.end && a.dim == b.dim && a.op == b.op;
                    });
}

CompactChunk Compact(const collective::Schedule& chunk, int rank, int world,
                     std::vector<std::pair<collective::ByteRange, collective::ByteRange>>* ranges) {
  using collective::HasRecv;
  using collective::HasSend;
  CompactChunk c;
  const auto& in = chunk.steps;
  const uint32_t n = static_cast<uint32_t>(in.size());
  c.steps.assign(n + 1, CompactChunk::Step{});
  if (ranges != nullptr) ranges->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    const collective::Step& s = in[i];
    CompactChunk::Step& o = c.steps[i];
    o.kind = s.kind;
    o.charge = s.charge;
    o.channel = s.channel;
    o.bytes = s.kind == collective::StepKind::kSend ? s.send.length : s.recv.length;
    if (HasSend(s.kind)) {
      o.send_delta = Delta(s.send_peer, rank, world);
      o.send_tag = s.send_tag;
    }
    if (HasRecv(s.kind)) {
      o.recv_delta = Delta(s.recv_peer, rank, world);
      o.recv_tag = s.recv_tag;
    }
    o.deps = s.deps.size();
    for (uint32_t d : s.deps) {
      GENIE_CHECK_LT(d, i) << "step dependencies must point backwards";
      ++c.steps[d + 1].dependents_begin;
    }
    if (ranges != nullptr) (*ranges)[i] = {s.send, s.recv};
  }
  for (uint32_t i = 0; i < n; ++i) c.steps[i + 1].dependents_begin += c.steps[i].dependents_begin;
  c.dependents.resize(c.steps[n].dependents_begin);
  std::vector<uint32_t> fill(n);
  for (uint32_t i = 0; i < n; ++i) fill[i] = c.steps[i].dependents_begin;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t d : in[i].deps) c.dependents[fill[d]++] = i;
  }
  c.phases.reserve(chunk.phases.size());
  for (uint32_t p = 0; p < chunk.phases.size(); ++p) {
    const auto& phase = chunk.phases[p];
    c.phases.push_back({phase.begin, phase.end, phase.dim, static_cast<uint32_t>(phase.op)});
    for (uint32_t st = phase.begin; st < phase.end; ++st) c.steps[st].phase = p;
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (c.steps[i].deps == 0) c.roots.push_back(i);
    c.most_deps = std::max(c.most_deps, c.steps[i].deps);
  }
  uint64_t h = HashBytes(c.steps, n);
  h = HashBytes(c.dependents, h);
  h = HashBytes(c.phases, h);
  c.hash = h;
  return c;
}

std::shared_ptr<const CompactChunk> ScheduleCache::Intern(CompactChunk chunk) {
  auto [begin, end] = table_.equal_range(chunk.hash);
  for (auto it = begin; it != end; ++it) {
    if (*it->second == chunk) {
      ++hits_;
      return it->second;
    }
  }
  ++misses_;
  auto shared = std::make_shared<const CompactChunk>(std::move(chunk));
  table_.emplace(shared->hash, shared);
  return shared;
}

ScheduleCache::StateSlot ScheduleCache::AcquireStates(
    const CompactChunk* chunk, const std::function<void(std::vector<uint8_t>&)>& initial) {
  StatePool& pool = state_pools_[chunk];
  const size_t n = chunk->size();
  if (pool.live == 0) {
    pool.initial.assign(n, 0);
    initial(pool.initial);
  }
  if (pool.filling < 0 || pool.blocks[static_cast<size_t>(pool.filling)].taken ==
                              pool.blocks[static_cast<size_t>(pool.filling)].width) {
    uint32_t index;
    if (pool.free_blocks.empty()) {
      index = static_cast<uint32_t>(pool.blocks.size());
      pool.blocks.emplace_back();
    } else {
      index = pool.free_blocks.back();
      pool.free_blocks.pop_back();
    }
    StateBlock& b = pool.blocks[index];
    b.width = pool.next_width;
    pool.next_width = std::min<uint32_t>(64, 2 * pool.next_width);
    b.taken = b.released = 0;
    // Whole cache lines, so that a 64-wide block's rows are lines of their own.
    const size_t bytes = std::max<size_t>(64, (n * b.width + 63) / 64 * 64);
    auto* cells = static_cast<uint8_t*>(std::aligned_alloc(64, bytes));
    GENIE_CHECK(cells != nullptr) << "out of memory for " << bytes << " bytes of step states";
    for (size_t s = 0; s < n; ++s) std::memset(cells + s * b.width, pool.initial[s], b.width);
    b.cells.reset(cells);
    pool.filling = index;
    ++pool.live;
  }
  StateBlock& b = pool.blocks[static_cast<size_t>(pool.filling)];
  const uint32_t slot = b.taken++;
  return StateSlot{b.cells.get() + slot, b.width, static_cast<uint32_t>(pool.filling)};
}

void ScheduleCache::ReleaseStates(const CompactChunk* chunk, const StateSlot& slot) {
  auto it = state_pools_.find(chunk);
  GENIE_CHECK(it != state_pools_.end()) << "step states released twice";
  StatePool& pool = it->second;
  StateBlock& b = pool.blocks[slot.block];
  if (++b.released < b.taken) return;
  b.cells.reset();
  if (pool.filling == static_cast<int64_t>(slot.block)) pool.filling = -1;
  pool.free_blocks.push_back(slot.block);
  if (--pool.live == 0) state_pools_.erase(it);
}

void ScheduleCache::Release(std::shared_ptr<const CompactChunk>& chunk) {
  if (chunk == nullptr) return;
  if (chunk.use_count() == 2) {  // the caller's and the table's
    auto [begin, end] = table_.equal_range(chunk->hash);
    for (auto it = begin; it != end; ++it) {
      if (it->second == chunk) {
        table_.erase(it);
        break;
      }
    }
  }
  chunk.reset();
}

}  // namespace genie::runtime
