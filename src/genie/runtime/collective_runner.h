// CollectiveRunner: executes one rank's Schedule of one collective on a Backend. It owns the
// order of execution the Schedule leaves open: phases of a chunk run in order, at most
// `active_chunks` chunks are inside phases of one dimension at once (ASTRA-sim's
// active-chunks-per-dimension), and waiting chunks enter a dimension FIFO or LIFO.
// On a modelled (simulated) backend it charges ASTRA-sim's local costs: endpoint-delay before
// every message and at the end of every phase, and 3 x floor(bytes / local-mem-bw) for every
// reduction. On a real backend the CPU pays them for real.
//
// Lifetime: created by the Executor per collective, lives until `done` has been called; all
// calls and callbacks on the backend's loop thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "genie/collective/collective_spec.h"
#include "genie/collective/schedule.h"
#include "genie/runtime/backend.h"

namespace genie::runtime {

struct LocalCosts {
  TimeNs endpoint_delay_ns = 0;  // system.json endpoint-delay (charged only when modelled)
  double local_mem_bw = 0;       // GB/s (1e9 B/s) for reductions; 0 = free
};

class CollectiveRunner {
 public:
  // tag_base is OR-ed into every step tag so concurrent collectives never match each other.
  // `buffer` (optional) is the rank's working buffer of schedule.buffer_bytes; when given,
  // payloads are real: received data is summed (as float32 elements) or copied into it.
  CollectiveRunner(Backend& backend, collective::Schedule schedule, uint64_t tag_base,
                   const LocalCosts& costs, int active_chunks, collective::SchedulingPolicy policy,
                   std::vector<uint8_t>* buffer, Callback done);
  CollectiveRunner(const CollectiveRunner&) = delete;
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  void Start();
  Bytes bytes_sent() const { return bytes_sent_; }
  Bytes bytes_received() const { return bytes_received_; }

 private:
  struct PhaseState {
    uint32_t remaining_steps = 0;
    bool started = false;
  };
  struct StepState {
    uint32_t unmet_deps = 0;
    uint32_t phase = 0;
    bool started = false;
    std::vector<uint32_t> dependents;
  };

  void EnterNextPhase(uint32_t chunk);
  void AdmitWaiting(uint16_t dim);
  void StartPhase(uint32_t phase_index);
  void StartStep(uint32_t step_index);
  void OnReceived(uint32_t step_index);
  void SendFor(uint32_t step_index);
  void CompleteStep(uint32_t step_index);
  void CompletePhase(uint32_t phase_index);
  void Reduce(const collective::ByteRange& range, const uint8_t* incoming);
  TimeNs ReductionCost(Bytes bytes) const;

  Backend& backend_;
  collective::Schedule schedule_;
  uint64_t tag_base_;
  LocalCosts costs_;
  int active_chunks_;
  collective::SchedulingPolicy policy_;
  std::vector<uint8_t>* buffer_;
  Callback done_;

  std::vector<StepState> steps_;
  std::vector<PhaseState> phases_;
  std::vector<std::vector<uint32_t>> chunk_phases_;  // chunk -> its phase indices, in order
  std::vector<uint32_t> chunk_next_;                 // chunk -> position in chunk_phases_
  std::vector<int> active_in_dim_;
  std::vector<std::deque<uint32_t>> waiting_in_dim_;  // chunks waiting to enter a dim
  // Per receiving step (real data); not zeroed: the message overwrites all of it.
  std::vector<std::unique_ptr<uint8_t[]>> scratch_;
  uint32_t chunks_left_ = 0;
  Bytes bytes_sent_ = 0;
  Bytes bytes_received_ = 0;
};

}  // namespace genie::runtime
