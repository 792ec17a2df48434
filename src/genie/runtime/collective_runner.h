// CollectiveRunner: executes one rank's Schedule of one collective on a Backend. It owns the
// order of execution the Schedule leaves open: phases of a chunk run in order, at most
// `active_chunks` chunks are inside phases of one dimension at once (ASTRA-sim's
// active-chunks-per-dimension), and waiting chunks enter a dimension FIFO or LIFO.
// On a modelled (simulated) backend it charges ASTRA-sim's local costs: endpoint-delay before
// every message and at the end of every phase, and 3 x floor(bytes / local-mem-bw) for every
// reduction. On a real backend the CPU pays them for real.
//
// Lifetime: created by the Executor per collective, lives until `done` has been called; all
// calls and callbacks on the backend's loop thread. It owns the schedule; given a planner, it
// plans each chunk when the chunk starts and drops it when it ends.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/common/status.h"
#include "genie/record/op_event.h"
#include "genie/runtime/backend.h"
#include "genie/runtime/compact_chunk.h"

namespace genie::runtime {

struct LocalCosts {
  TimeNs endpoint_delay_ns = 0;  // system.json endpoint-delay (charged only when modelled)
  double local_mem_bw = 0;       // GB/s (1e9 B/s) for reductions; 0 = free
};

class alignas(64) CollectiveRunner final : private EventHandler {
 public:
  // Plans chunk k (collective::PlanChunk): steps and phases of that chunk alone, indices from 0.
  using ChunkPlanner = std::function<Result<collective::Schedule>(uint32_t chunk)>;
  // Gives chunk k in compact form (PlanShared: shared between ranks, planned once per class).
  using SharedChunk = std::shared_ptr<const CompactChunk>;
  using CompactPlanner = std::function<SharedChunk(uint32_t chunk)>;

  // tag_base is OR-ed into every step tag so concurrent collectives never match each other.
  // `buffer` (optional) is the rank's working buffer of schedule.buffer_bytes; when given,
  // payloads are real: received data is summed (as float32 elements) or copied into it.
  CollectiveRunner(Backend& backend, collective::Schedule schedule, uint64_t tag_base,
                   const LocalCosts& costs, int active_chunks, collective::SchedulingPolicy policy,
                   std::vector<uint8_t>* buffer, Callback done);
  // Plans on demand: `first` is chunk 0 (PlanChunk(spec, i, 0)); chunk k of `chunks` is
  // planned by `plan(k)` when it first enters a dimension and its steps are dropped when it
  // ends, so a rank holds only its running chunks' steps (a quarter of the schedule for
  // ASTRA-sim's 4 chunks, 1 active). Every chunk runs on the dimensions of chunk 0's phases,
  // as the planner lays them out. No payloads (buffer = null).
  CollectiveRunner(Backend& backend, collective::Schedule first, uint32_t chunks, ChunkPlanner plan,
                   uint64_t tag_base, const LocalCosts& costs, int active_chunks,
                   collective::SchedulingPolicy policy, Callback done);
  // The same, with chunks already compact: `first` is chunk 0, `plan(k)` gives chunk k (and
  // aborts on a planning error: chunk 0 was planned, the others differ only in byte ranges).
  CollectiveRunner(Backend& backend, SharedChunk first, uint32_t chunks, CompactPlanner plan,
                   uint64_t tag_base, const LocalCosts& costs, int active_chunks,
                   collective::SchedulingPolicy policy, Callback done);
  ~CollectiveRunner();
  CollectiveRunner(const CollectiveRunner&) = delete;
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  // The collective's identity in every message's `flow` (its high 32 bits; 0: tag_base's),
  // the same on every rank of its group: the flow model paces a chunk's messages together by
  // it, so it must not collide between groups (tag_base holds 14 bits of the group).
  void set_flow_base(uint64_t base) { flow_base_ = base & ~uint64_t{0xffffffff}; }
  void Start();
  Bytes bytes_sent() const { return bytes_sent_; }
  Bytes bytes_received() const { return bytes_received_; }
  // On more than one dimension: every finished phase (chunk, dim, op, start, end), in the
  // order they finished; empty for one dimension.
  const std::vector<record::PhaseSpan>& phase_spans() const { return spans_; }

 private:
  struct PhaseState {
    uint32_t remaining_steps = 0;
    bool started = false;
    TimeNs start = 0;
  };
  // Each step's mutable state: its unmet dependencies and a started bit; the rest of the step
  // is in the (possibly shared) CompactChunk. Whether its phase has begun is the phase's state,
  // not the step's: a phase's start then visits only the steps that can start (its roots and
  // the steps whose dependencies were met early), not every step (at 4,096 ranks a ring phase
  // has 4,095 steps, each state in its own cache line, every rank's sweep a trip to memory).
  // One byte per step when every step of the chunk waits for fewer than 128 others (a ring step
  // waits for one), else four. In simulation the bytes sit in the schedule cache's interleaved
  // blocks (ScheduleCache::AcquireStates: 64 ranks' states of one step in one cache line), else
  // in the runner's own array.
  class StepStates {
   public:
    void Init(const CompactChunk& plan, ScheduleCache* cache);
    void Release(const CompactChunk* plan, ScheduleCache* cache);
    // Marks s started; false when it already was.
    bool Start(uint32_t s) {
      if (narrow_ != nullptr) {
        if ((Cell(s) & kNarrowStarted) != 0) return false;
        Cell(s) |= kNarrowStarted;
      } else {
        if ((wide_[s] & kWideStarted) != 0) return false;
        wide_[s] |= kWideStarted;
      }
      return true;
    }
    // One dependency of s is done; true when none is left (s cannot have started yet).
    bool Satisfy(uint32_t s) { return narrow_ != nullptr ? --Cell(s) == 0 : --wide_[s] == 0; }

   private:
    static constexpr uint8_t kNarrowStarted = 0x80;
    static constexpr uint32_t kWideStarted = 0x80000000u;
    uint8_t& Cell(uint32_t s) const { return narrow_[size_t{s} * stride_]; }
    uint8_t* narrow_ = nullptr;  // step s at narrow_[s * stride_]; null: wide_
    size_t stride_ = 1;
    ScheduleCache::StateSlot slot_;  // cells from the cache (slot_.cells != null)
    std::vector<uint8_t> own_;
    std::vector<uint32_t> wide_;
  };
  // One chunk: its steps (shared with the ranks whose chunk is the same up to a rotation, in
  // simulation) and this rank's execution state, present while it runs. The fields every step
  // touches come first, in one cache line: the plan, the first phases' counters, the states.
  static constexpr uint32_t kInlinePhases = 2;
  struct alignas(64) Chunk {
    const CompactChunk* p = nullptr;  // plan.get()
    PhaseState first_phases[kInlinePhases];
    StepStates steps;
    std::vector<PhaseState> more_phases;  // phases from kInlinePhases on
    std::shared_ptr<const CompactChunk> plan;
    std::vector<uint16_t> dims;  // dimension of each phase, in order
    uint32_t next = 0;           // position in dims
    bool planned = false;
    // Real data only: each step's (send, recv) byte ranges and receive scratch.
    std::vector<std::pair<collective::ByteRange, collective::ByteRange>> ranges;
    std::vector<std::unique_ptr<uint8_t[]>> scratch;
    // Steps whose dependencies were all met before their phase began (a planner may order
    // steps across phases), in the order met: started when their phase begins.
    std::vector<uint32_t> early;

    PhaseState& phase(uint32_t k) {
      return k < kInlinePhases ? first_phases[k] : more_phases[k - kInlinePhases];
    }
  };

  // Builds c's compact plan (shared through the backend's cache when there are no payloads)
  // and its execution state.
  void Prepare(Chunk& c, const collective::Schedule& plan);
  // Sets up c's execution state for its compact plan `plan`.
  void Adopt(Chunk& c, SharedChunk plan);
  void Release(Chunk& c);
  // (rank + delta) mod world: a delta is below the world size (Compact), so one subtraction
  // does it, without a 64-bit division per message.
  int PeerOf(uint32_t delta) const {
    uint64_t peer = static_cast<uint64_t>(rank_) + delta;
    const auto world = static_cast<uint64_t>(world_);
    if (peer >= world) peer -= world;
    if (peer >= world) peer %= world;
    return static_cast<int>(peer);
  }
  // Its own completions and timers come back as events: arg = kind << 60 | chunk << 32 | step
  // (or phase), no closure per step.
  enum class Ev : uint64_t { kReceived, kReduced, kPost, kPostDetached, kSent, kPhaseDone };
  static uint64_t Encode(Ev ev, uint32_t chunk, uint32_t index) {
    return (static_cast<uint64_t>(ev) << 60) | (uint64_t{chunk} << 32) | index;
  }
  void OnEvent(uint64_t arg) override;
  void FinishPhase(uint32_t chunk, uint32_t phase_index);
  void EnterNextPhase(uint32_t chunk);
  void AdmitWaiting(uint16_t dim);
  void StartPhase(uint32_t chunk, uint32_t phase_index);
  void StartStep(uint32_t chunk, uint32_t step_index);
  void OnReceived(uint32_t chunk, uint32_t step_index);
  // Sends step_index's message after its modelled costs: `reduced` ns of a reduction on
  // receive first (0: none), then the endpoint-delay and any reduction charged before the send.
  void SendFor(uint32_t chunk, uint32_t step_index, TimeNs reduced = 0);
  Message MessageFor(uint32_t chunk, uint32_t step_index) const;
  // `detached`: the step already completed (ReduceCharge::kBeforeSendDetached); delivery
  // calls nothing back.
  void Post(uint32_t chunk, uint32_t step_index, bool detached = false);
  void CompleteStep(uint32_t chunk, uint32_t step_index);
  void CompletePhase(uint32_t chunk, uint32_t phase_index);
  void Reduce(const collective::ByteRange& range, const uint8_t* incoming);
  TimeNs ReductionCost(Bytes bytes);  // remembers the last size's cost

  // Sets the number of chunks (once, before any runs).
  // The per-dimension admission state, and on a real network the order in which each dimension
  // admits its chunks when arrival order could deadlock. `one_order`: every chunk has chunk
  // 0's dimensions.
  void SetUpDimensions(uint16_t max_dim, bool one_order);
  void ResizeChunks(uint32_t n);
  std::span<Chunk> Chunks() { return {chunks_, num_chunks_}; }

  // What every event reads, in the object's first cache line, the vtable pointer's. At 4,096
  // ranks each event of a rank finds its runner out of the cache; the running chunk's hot line
  // (Chunk: plan, phase counters, states) then sits at an address known from `this` too, so the
  // two misses overlap instead of one waiting for the other's pointer.
  Backend& backend_;
  Chunk* chunks_ = nullptr;  // local_chunks_, or heap_chunks_ when more
  uint64_t tag_base_;
  uint64_t flow_base_ = 0;
  int rank_;
  int world_;
  std::vector<uint8_t>* buffer_;
  Bytes bytes_sent_ = 0;
  Bytes bytes_received_ = 0;
  static constexpr uint32_t kLocalChunks = 4;  // ASTRA-sim's usual chunk count
  Chunk local_chunks_[kLocalChunks];
  std::unique_ptr<Chunk[]> heap_chunks_;
  uint32_t num_chunks_ = 0;

  LocalCosts costs_;
  bool modelled_;  // backend_.modelled(), asked once (a virtual call per message otherwise)
  Bytes reduction_bytes_ = 0;  // ReductionCost's last size and cost (0 costs 0)
  TimeNs reduction_cost_ = 0;
  int active_chunks_;
  collective::SchedulingPolicy policy_;
  Callback done_;
  CompactPlanner plan_;  // null: every chunk was given up front

  std::vector<int> active_in_dim_;
  std::vector<std::deque<uint32_t>> waiting_in_dim_;  // chunks waiting to enter a dim
  // Chunks in different dimension orders (themis): each dim admits chunks in this fixed order.
  std::vector<std::vector<uint32_t>> dim_sequence_;  // empty: FIFO/LIFO as they arrive
  std::vector<size_t> dim_next_;
  uint32_t chunks_left_ = 0;
  bool record_spans_ = false;  // more than one dimension
  std::vector<record::PhaseSpan> spans_;
};

}  // namespace genie::runtime
