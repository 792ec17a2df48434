#include "genie/runtime/plan_memo.h"

#include <bit>
#include <string_view>

#include "genie/collective/planner.h"

namespace genie::runtime {

PlanKey MemoKey(const collective::CollectiveSpec& spec, int group_index) {
  const collective::PlanOptions& o = spec.options;
  PlanKey key;
  std::vector<uint64_t>& w = key.words;
  auto list = [&w](const auto& values) {
    w.push_back(values.size());
    for (const auto& v : values) w.push_back(static_cast<uint64_t>(v));
  };
  w.push_back(static_cast<uint64_t>(spec.type));
  w.push_back(spec.size);
  w.push_back(static_cast<uint64_t>(group_index));
  w.push_back(static_cast<uint64_t>(spec.root));
  w.push_back(spec.collective_id);
  list(spec.group);
  list(o.algorithms);
  w.push_back(static_cast<uint64_t>(o.direct_window));
  list(o.dims);
  list(o.involved_dim);
  w.push_back(static_cast<uint64_t>(o.optimization));
  w.push_back(static_cast<uint64_t>(o.inter_dim));
  w.push_back(o.dim_bandwidth.size());
  for (double b : o.dim_bandwidth) w.push_back(std::bit_cast<uint64_t>(b));
  w.push_back(static_cast<uint64_t>(o.chunks));
  w.push_back(static_cast<uint64_t>(o.active_chunks));
  w.push_back(static_cast<uint64_t>(o.channels));
  w.push_back(o.slice_bytes);
  w.push_back(reinterpret_cast<uintptr_t>(o.custom.get()));  // loaded once, shared by its specs
  w.push_back(o.tree_stream % 2);
  const std::string_view bytes(reinterpret_cast<const char*>(w.data()), w.size() * sizeof(w[0]));
  key.hash = std::hash<std::string_view>()(bytes);
  return key;
}

Result<std::shared_ptr<const PlanMemo::Chunks>> PlanMemo::Get(
    const collective::CollectiveSpec& spec, int group_index, int world) {
  PlanKey key = MemoKey(spec, group_index);
  if (auto it = plans_.find(key); it != plans_.end()) {
    ++hits_;
    return it->second;
  }
  ++misses_;
  const int rank = spec.group[static_cast<size_t>(group_index)];
  auto chunks = std::make_shared<Chunks>();
  uint64_t steps = 0;
  const int count = std::max(1, spec.options.chunks);
  for (int k = 0; k < count; ++k) {
    GENIE_ASSIGN_OR_RETURN(collective::Schedule s, collective::PlanChunk(spec, group_index, k));
    auto c = std::make_shared<const CompactChunk>(Compact(s, rank, world, nullptr));
    // The runner takes chunk 0's dimensions for every chunk (CollectiveRunner's chunk
    // planner): a plan whose chunks differ is not one it can run this way.
    const auto& first = k == 0 ? *c : *(*chunks)[0];
    if (c->phases.size() != first.phases.size()) return std::shared_ptr<const Chunks>();
    for (size_t p = 0; p < c->phases.size(); ++p) {
      if (c->phases[p].dim != first.phases[p].dim) return std::shared_ptr<const Chunks>();
    }
    steps += c->size();
    chunks->push_back(std::move(c));
  }
  std::shared_ptr<const Chunks> out = std::move(chunks);
  if (steps > kMaxSteps) return out;  // larger than the memo: used once, planned each time
  if (steps_ + steps > kMaxSteps) {
    plans_.clear();
    steps_ = 0;
  }
  steps_ += steps;
  plans_.emplace(std::move(key), out);
  return out;
}

}  // namespace genie::runtime
