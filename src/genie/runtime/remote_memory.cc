#include "genie/runtime/remote_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <utility>

#include "genie/common/checked_math.h"

namespace genie::runtime {
namespace {

using config::MemoryConfig;
using config::MemoryType;

// How many queues `config` has for `world_size` ranks (0 for PER_NPU), completing num-nodes
// when the file leaves it out.
Result<int> QueueCount(MemoryConfig* config, int world_size, std::vector<std::string>* notes) {
  switch (config->type) {
    case MemoryType::kPerNodeMemoryExpansion: {
      const int per_node = config->num_npus_per_node;
      const int needed = (world_size + per_node - 1) / per_node;
      if (config->num_nodes == 0) {
        // ASTRA-sim makes no queue at all then (and indexes past its vector); one queue per
        // node the ranks fill is what the file describes.
        config->num_nodes = needed;
        if (notes != nullptr) {
          notes->push_back(config->path + ": num-nodes absent; genie uses " +
                           std::to_string(needed) + " (" + std::to_string(world_size) +
                           " ranks / num-npus-per-node " + std::to_string(per_node) + ")");
        }
      }
      const int nodes = config->num_nodes;
      if (needed > nodes) {
        return Status::InvalidArgument(
            config->path + ": key \"num-nodes\": " + std::to_string(nodes) + " node(s) of " +
            std::to_string(per_node) + " NPUs hold ranks 0.." +
            std::to_string(int64_t{nodes} * per_node - 1) + " but the workload has " +
            std::to_string(world_size) + " ranks (rank " + std::to_string(world_size - 1) +
            " would be on node " + std::to_string(needed - 1) +
            "); give num-nodes >= " + std::to_string(needed));
      }
      return nodes;
    }
    case MemoryType::kMemoryPool:
      return 1;
    default:
      return 0;
  }
}

// ---- Simulation: ASTRA-sim's queues, one object for every rank ----

class SimulatedMemory final : public RemoteMemory {
 public:
  SimulatedMemory(MemoryConfig config, int queues) : config_(std::move(config)), queues_(queues) {}

  TimeNs Issue(int rank, Bytes bytes, Backend& backend, Callback done) override {
    Pending p{bytes, &backend, backend.Now(), std::move(done)};
    const int q = config_.QueueOf(rank);
    if (q < 0) {  // PER_NPU: no contention
      Start(-1, std::move(p));
      return 0;
    }
    Queue& queue = queues_[q];
    if (queue.busy) {
      queue.waiting.push_back(std::move(p));
      return 0;
    }
    queue.busy = true;
    Start(q, std::move(p));
    return 0;
  }

 private:
  struct Pending {
    Bytes bytes = 0;
    Backend* backend = nullptr;
    TimeNs issued = 0;
    Callback done;
  };
  struct Queue {
    bool busy = false;
    std::deque<Pending> waiting;
  };

  void Start(int queue, Pending p) {
    Backend* backend = p.backend;
    CountWait(backend->Now() - p.issued);
    backend->After(config_.AccessTimeNs(p.bytes), [this, queue, done = std::move(p.done)] {
      done();  // the rank's node ends first, as in ASTRA-sim
      if (queue >= 0) End(queue);
    });
  }

  void End(int queue) {
    Queue& q = queues_[queue];
    if (q.waiting.empty()) {
      q.busy = false;
      return;
    }
    Pending next = std::move(q.waiting.front());
    q.waiting.pop_front();
    Start(queue, std::move(next));
  }

  MemoryConfig config_;
  std::vector<Queue> queues_;
};

// ---- Real runs: one queue word in shared memory per host-local queue ----

static_assert(std::atomic<int64_t>::is_always_lock_free,
              "the shared queue word must be lock-free to be shared between processes");

class HostSharedMemory final : public RemoteMemory {
 public:
  HostSharedMemory(MemoryConfig config, std::string name, void* map)
      : config_(std::move(config)),
        name_(std::move(name)),
        map_(map),
        busy_until_(static_cast<std::atomic<int64_t>*>(map)) {}
  ~HostSharedMemory() override {
    munmap(map_, sizeof(int64_t));
    // Every rank unlinks at its end (ENOENT for all but the first): mapped peers keep their
    // mapping, and nothing is left in /dev/shm however the ranks end.
    shm_unlink(name_.c_str());
  }

  TimeNs Issue(int, Bytes bytes, Backend& backend, Callback done) override {
    const TimeNs now = backend.Now();
    const TimeNs hold = config_.AccessTimeNs(bytes);
    int64_t busy = busy_until_->load(std::memory_order_relaxed);
    TimeNs start = 0, end = 0;
    do {
      start = std::max<TimeNs>(now, busy);
      end = SaturatingAdd(start, hold);
    } while (!busy_until_->compare_exchange_weak(busy, end, std::memory_order_acq_rel));
    CountWait(start - now);
    backend.After(end - now, std::move(done));
    return end;
  }

 private:
  MemoryConfig config_;
  std::string name_;
  void* map_;
  std::atomic<int64_t>* busy_until_;
};

std::string RankRange(int lo, int hi) {
  return lo == hi ? "rank " + std::to_string(lo)
                  : "ranks " + std::to_string(lo) + "-" + std::to_string(hi);
}

}  // namespace

void RemoteMemory::CountWait(TimeNs wait) {
  if (wait <= 0) return;
  ++waited_;
  wait_ns_ = SaturatingAdd(wait_ns_, wait);
}

Result<std::unique_ptr<RemoteMemory>> RemoteMemory::CreateSimulated(
    const MemoryConfig& config, int world_size, std::vector<std::string>* notes) {
  MemoryConfig c = config;
  GENIE_ASSIGN_OR_RETURN(int queues, QueueCount(&c, world_size, notes));
  return std::unique_ptr<RemoteMemory>(new SimulatedMemory(std::move(c), queues));
}

Result<std::unique_ptr<RemoteMemory>> RemoteMemory::OpenHostShared(
    const MemoryConfig& config, int world_size, int rank, const std::vector<std::string>& host_ids,
    const std::string& run_id, std::vector<std::string>* notes) {
  MemoryConfig c = config;
  GENIE_ASSIGN_OR_RETURN(int queues, QueueCount(&c, world_size, notes));
  const int q = c.QueueOf(rank);
  if (queues == 0 || q < 0) return std::unique_ptr<RemoteMemory>();  // PER_NPU: nothing shared
  const int per_queue = c.type == MemoryType::kMemoryPool ? world_size : c.num_npus_per_node;
  const int lo = q * per_queue;
  const int hi = std::min(world_size, lo + per_queue) - 1;
  const std::string what = c.path + ": " + MemoryTypeName(c.type) + " queue " + std::to_string(q) +
                           " (" + RankRange(lo, hi) + ")";
  const auto fallback = " cannot be shared by a real run, so rank " + std::to_string(rank) +
                        "'s accesses each take their own time (as PER_NPU_MEMORY_EXPANSION); "
                        "genie simulate models the queue";
  if (static_cast<int>(host_ids.size()) != world_size) {
    if (notes != nullptr) notes->push_back(what + ": the ranks' hosts are unknown; it" + fallback);
    return std::unique_ptr<RemoteMemory>();
  }
  for (int r = lo; r <= hi; ++r) {
    if (host_ids[r] != host_ids[rank]) {
      if (notes != nullptr) {
        notes->push_back(what + " spans hosts (rank " + std::to_string(r) + " runs on " +
                         host_ids[r] + ", rank " + std::to_string(rank) + " on " + host_ids[rank] +
                         "); it" + fallback);
      }
      return std::unique_ptr<RemoteMemory>();
    }
  }
  std::string id;
  for (char ch : run_id) {
    if (std::isalnum(static_cast<unsigned char>(ch))) id += ch;
  }
  const std::string name = "/genie-mem-" + id + "-" + std::to_string(q);
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) {
    return Status::IoError("rank " + std::to_string(rank) + ": cannot open shared memory " + name +
                           " for " + what + ": " + std::strerror(errno) +
                           " (is /dev/shm mounted and writable?)");
  }
  // A fresh object reads as zero (idle since the epoch); ftruncate of an existing one to the
  // same size keeps its contents, so the ranks may open it in any order.
  void* map = MAP_FAILED;
  if (ftruncate(fd, sizeof(int64_t)) == 0) {
    map = mmap(nullptr, sizeof(int64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  const int err = errno;
  close(fd);
  if (map == MAP_FAILED) {
    shm_unlink(name.c_str());
    return Status::IoError("rank " + std::to_string(rank) + ": cannot map shared memory " + name +
                           " for " + what + ": " + std::strerror(err));
  }
  return std::unique_ptr<RemoteMemory>(new HostSharedMemory(std::move(c), name, map));
}

}  // namespace genie::runtime
