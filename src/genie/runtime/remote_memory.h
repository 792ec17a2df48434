// RemoteMemory: the queueing of ASTRA-sim's analytical remote-memory backend
// (extern/remote_memory_backend/analytical) for MEM_LOAD / MEM_STORE nodes. An access holds
// its memory for MemoryConfig::AccessTimeNs(size):
//  - PER_NPU_MEMORY_EXPANSION: no shared queue, every access starts at once;
//  - PER_NODE_MEMORY_EXPANSION: one transaction at a time per node (node = rank /
//    num-npus-per-node, num-nodes queues); the others wait FIFO in issue order and the next
//    starts when the running one ends;
//  - MEMORY_POOL: the same with one queue for all ranks;
//  - NO_MEMORY_EXPANSION: an access is an error (the Executor names the node).
//
// Two implementations:
//  - Simulated (CreateSimulated): one object shared by every simulated rank. When an access
//    ends, its rank's `done` runs before the next waiting access starts (ASTRA-sim registers
//    the workload's completion event before the memory's own), so an access issued by that
//    callback queues behind those already waiting. (ASTRA-sim 518bd51 reads the finished
//    request's handler data after the workload freed it; with several NPUs per node only the
//    first access completes there. genie serialises them, as the model describes.)
//  - Host-shared (OpenHostShared, `genie run`): the ranks of one queue run in separate
//    processes. When they are all on this host they share the queue truthfully: its "busy
//    until" instant (CLOCK_MONOTONIC ns, the same for every process of a host) lives in a
//    POSIX shared-memory word; an access reserves [max(now, busy until), + access time) with
//    one compare-and-swap, which serves accesses one at a time in the order they were issued —
//    the same FIFO, in real time. A queue whose ranks span hosts cannot be shared by a real
//    run; then the caller gets no queue (each access takes its own time, PER_NPU's behaviour)
//    and a note that says so.
//
// Ownership: the driver owns it and it outlives every Executor that borrows it through
// ExecutorConfig. Simulated: single-threaded (the simulation loop). Host-shared: one per rank
// process, on that rank's loop thread; the shared word is safe across processes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/config/memory_config.h"
#include "genie/runtime/backend.h"

namespace genie::runtime {

class RemoteMemory {
 public:
  virtual ~RemoteMemory() = default;

  // Checks that every rank of `world_size` has a queue (PER_NODE: rank / num-npus-per-node <
  // num-nodes); `notes` gets what genie assumed (num-nodes absent).
  static Result<std::unique_ptr<RemoteMemory>> CreateSimulated(const config::MemoryConfig& config,
                                                               int world_size,
                                                               std::vector<std::string>* notes);

  // `rank`'s queue in a real run, shared through /dev/shm with the other ranks of its queue
  // when `host_ids` (one per rank) says they all run on this host; nullptr (and a note saying
  // what run does instead) when they do not, or for PER_NPU. `run_id` names the shared object
  // so that concurrent jobs never share a queue; it is unlinked when this object goes.
  static Result<std::unique_ptr<RemoteMemory>> OpenHostShared(
      const config::MemoryConfig& config, int world_size, int rank,
      const std::vector<std::string>& host_ids, const std::string& run_id,
      std::vector<std::string>* notes);

  // Starts or queues one access of `bytes` by `rank`; `done` runs on `backend` when it ends.
  // Returns when it is due to end, or 0 while that depends on accesses not yet finished
  // (simulation).
  virtual TimeNs Issue(int rank, Bytes bytes, Backend& backend, Callback done) = 0;

  // Accesses that had to wait for another, and their summed wait in ns (this process's).
  uint64_t waited() const { return waited_; }
  TimeNs wait_ns() const { return wait_ns_; }

 protected:
  void CountWait(TimeNs wait);

 private:
  uint64_t waited_ = 0;
  TimeNs wait_ns_ = 0;
};

}  // namespace genie::runtime
