#include "genie/runtime/compact_chunk.h"

#include <cstring>
#include <string_view>

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
