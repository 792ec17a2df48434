// CompactChunk: one chunk of a rank's collective Schedule in the form the CollectiveRunner
// executes — without byte offsets, with peers relative to the rank (peer = (rank + delta) mod
// world size) and dependents as one array (CSR). Ranks whose chunks are the same up to such a
// rotation (every rank of a ring or halving-doubling over equal blocks) have equal
// CompactChunks, so a simulation shares one between them (ScheduleCache): thousands of ranks
// then read the same steps, which stay in the CPU cache, instead of each holding its own.
//
// ScheduleCache interns CompactChunks by content (hash, then full comparison: sharing never
// depends on an assumption about the planner). It also skips planning: PlanShared() looks a
// chunk up by the planner's inputs made relative to the rank (PlanKey) and plans only on a miss,
// so a ring of N ranks plans each chunk once instead of N times. That rests on one property,
// checked for every case it covers by compact_chunk_test
// (RotationKeyedChunksEqualEachRanksOwnPlan): for a spec that RotationKey() accepts and a chunk
// that SharesByRotation() accepts, member i's chunk with peers written as group-index offsets from
// i is the same for every i. Ranks with equal keys also map those offsets to the same rank deltas,
// so their CompactChunks are equal. Anything else (other algorithms, several dimensions, unequal
// blocks, custom algorithms) is planned per rank as before. Owned by SimBackend; single-threaded
// like it. Immutable once built: any thread may read a CompactChunk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"

namespace genie::runtime {

struct CompactChunk {
  struct Step {
    uint64_t bytes = 0;       // received (any receiving kind) or sent (kSend)
    uint32_t send_delta = 0;  // send peer = (rank + send_delta) mod world
    uint32_t recv_delta = 0;
    uint32_t send_tag = 0;
    uint32_t recv_tag = 0;
    uint32_t dependents_begin = 0;  // into `dependents`; the next step's value ends it
    uint32_t deps = 0;              // how many earlier steps it waits for
    uint32_t phase = 0;             // index into `phases`
    uint16_t channel = 0;
    collective::StepKind kind = collective::StepKind::kSend;
    collective::ReduceCharge charge = collective::ReduceCharge::kOnReceive;
  };
  static_assert(sizeof(Step) == 40 && std::has_unique_object_representations_v<Step>,
                "Step is hashed and compared as bytes: no padding");
  struct PhaseInfo {
    uint32_t begin = 0;
    uint32_t end = 0;
    uint32_t dim = 0;
    uint32_t op = 0;  // the phase's CollectiveType on that dim (a word: hashed as bytes)
  };

  std::vector<Step> steps;  // one per step, and a last one whose dependents_begin ends the array
  std::vector<uint32_t> dependents;
  std::vector<PhaseInfo> phases;
  // The steps that wait for nothing, ascending (derived from `steps`: not hashed or compared).
  // A phase's are those in [begin, end): its start walks them instead of every step.
  std::vector<uint32_t> roots;
  uint32_t most_deps = 0;  // the most any step waits for (derived like roots)
  uint64_t hash = 0;

  uint32_t size() const { return static_cast<uint32_t>(steps.size()) - 1; }
  bool operator==(const CompactChunk& o) const;
};

// Builds the compact form of `chunk` (one chunk's schedule, step indices local to it) for
// `rank` of `world` ranks; `ranges`, when given, receives each step's (send, recv) byte ranges
// (real payloads need them, and they are what differs between rotated ranks).
CompactChunk Compact(const collective::Schedule& chunk, int rank, int world,
                     std::vector<std::pair<collective::ByteRange, collective::ByteRange>>* ranges);

// A member's planner inputs made relative to it: every option, the root and the group as
// offsets from the member's index, and the group's ranks as deltas (mod world) from its rank.
struct PlanKey {
  std::vector<uint64_t> words;
  uint64_t hash = 0;
  bool operator==(const PlanKey& o) const { return hash == o.hash && words == o.words; }
};

// The key of member `group_index` of `spec` (ranks of `world`), or null when the spec is not
// one whose plans are equal up to a rotation: one dimension, ring or direct (also as the
// rooted and one-* variants), no custom algorithm, baseline inter-dimension scheduling.
std::shared_ptr<const PlanKey> RotationKey(const collective::CollectiveSpec& spec, int group_index,
                                           int world);
// Whether chunk `chunk` of such a spec is shared: its bytes split into equal blocks, one per
// member (unequal blocks make the plan depend on the member's position).
bool SharesByRotation(const collective::CollectiveSpec& spec, int chunk);

class ScheduleCache {
 public:
  // The cached chunk equal to `chunk`, or `chunk` itself, now cached.
  std::shared_ptr<const CompactChunk> Intern(CompactChunk chunk);
  // Drops the caller's reference; the cache forgets the chunk once nobody else holds it.
  void Release(std::shared_ptr<const CompactChunk>& chunk);
  size_t size() const { return table_.size(); }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

  // The cached key equal to `key` (ranks of one class then hold one copy: a key is as long as
  // the group), or `key` itself; null stays null.
  std::shared_ptr<const PlanKey> InternKey(std::shared_ptr<const PlanKey> key);
  // The chunk planned for an equal key and the same chunk index while some rank holds it, else
  // null. Remember() records `plan` for (key, chunk); the record lapses with the chunk.
  std::shared_ptr<const CompactChunk> Find(const PlanKey& key, uint32_t chunk);
  void Remember(std::shared_ptr<const PlanKey> key, uint32_t chunk,
                const std::shared_ptr<const CompactChunk>& plan);
  uint64_t plans_skipped() const { return plans_skipped_; }

  // Byte states of the ranks running one chunk (the CollectiveRunner's per-step state),
  // interleaved: ranks that take slots one after the other share a block of `width` slots laid
  // out step-major (slot i's step s at s * width + i). The ranks of a ring run their steps in
  // lockstep, so a round over 4,096 ranks touches one cache line per 64 ranks instead of one
  // line (and one page) per rank: at 2,048 ranks that miss was a fifth of the run. Widths double
  // from 1 to 64 as ranks join, so a chunk run by few ranks costs at most twice their bytes; a
  // block is freed when every slot taken in it is released.
  struct StateSlot {
    uint8_t* cells = nullptr;  // step s at cells[s * stride]
    uint32_t stride = 1;
    uint32_t block = 0;
  };
  // A slot for one more rank running `chunk`, every step's cell set from `initial` (called once
  // per chunk to fill a vector of chunk->size() first states).
  StateSlot AcquireStates(const CompactChunk* chunk,
                          const std::function<void(std::vector<uint8_t>&)>& initial);
  void ReleaseStates(const CompactChunk* chunk, const StateSlot& slot);

 private:
  struct FreeCells {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  struct StateBlock {
    std::unique_ptr<uint8_t, FreeCells> cells;
    uint32_t width = 0, taken = 0, released = 0;
  };
  struct StatePool {
    std::vector<uint8_t> initial;
    std::vector<StateBlock> blocks;  // a freed block keeps its index (cells null) for reuse
    std::vector<uint32_t> free_blocks;
    int64_t filling = -1;  // the block new slots come from
    uint32_t live = 0;     // blocks with cells
    uint32_t next_width = 1;
  };
  std::unordered_map<const CompactChunk*, StatePool> state_pools_;
  struct Keyed {
    std::shared_ptr<const PlanKey> key;
    uint32_t chunk;
    std::weak_ptr<const CompactChunk> plan;
  };
  std::unordered_multimap<uint64_t, std::shared_ptr<const CompactChunk>> table_;
  std::unordered_multimap<uint64_t, Keyed> keyed_;
  size_t sweep_at_ = 256;  // keyed_ size at which lapsed records are dropped
  std::unordered_multimap<uint64_t, std::weak_ptr<const PlanKey>> keys_;
  size_t sweep_keys_at_ = 256;
  uint64_t hits_ = 0, misses_ = 0, plans_skipped_ = 0;
};

// Chunk `chunk` of member `group_index`'s plan of `spec` in compact form for a world of
// `world` ranks, shared through `cache`: found by `key` (RotationKey; may be null) when the
// chunk SharesByRotation, else planned (collective::PlanChunk), compacted and interned.
Result<std::shared_ptr<const CompactChunk>> PlanShared(const collective::CollectiveSpec& spec,
                                                       int group_index, int world, uint32_t chunk,
                                                       const std::shared_ptr<const PlanKey>& key,
                                                       ScheduleCache& cache);

}  // namespace genie::runtime
