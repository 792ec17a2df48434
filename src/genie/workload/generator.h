// Workload generators behind `genie gen`: write Chakra traces `<output>.<rank>.et` that genie
// and other tools (ASTRA-sim, Chakra's feeder) can run. The node fields and attribute types
// match what ASTRA-sim's shipped microbenchmarks carry (is_cpu_op bool, comm_type int64,
// comm_size int64; COMP nodes with duration_micros). Pure file output; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/workload/op.h"

namespace genie::workload {

struct GenCollectiveOptions {
  CollectiveType type = CollectiveType::kAllReduce;
  Bytes size = 1 << 20;   // comm_size as ASTRA-sim means it (REFERENCE §2)
  int ranks = 8;
  std::string output;     // prefix path: files are <output>.<rank>.et
  bool gzip = false;
};

struct GenComputeChainOptions {
  uint64_t count = 1000;  // nodes per rank, each depending on the previous one
  TimeNs duration = kNsPerMs;  // per node; must be whole microseconds (Chakra's unit)
  int ranks = 1;
  uint64_t num_ops = 0;   // written when > 0 (roofline input)
  uint64_t tensor_size = 0;
  std::string output;
  bool gzip = false;
};

// K independent remote-memory accesses per rank (MEM_LOAD, or MEM_STORE with `store`), all
// ready at t = 0: the ranks' accesses meet in memory.json's queues (runtime/remote_memory.h).
struct GenRemoteMemoryOptions {
  uint64_t count = 4;    // nodes per rank
  Bytes size = 1 << 20;  // tensor_size of each access
  bool store = false;
  int ranks = 4;
  std::string output;
  bool gzip = false;
};

// Returns the number of files written.
Result<int> GenerateCollective(const GenCollectiveOptions& options);
Result<int> GenerateComputeChain(const GenComputeChainOptions& options);
Result<int> GenerateRemoteMemory(const GenRemoteMemoryOptions& options);

// "1MB" for 1 MiB, "64KB" for 64 KiB, "1000B" otherwise (the shipped microbenchmark naming).
std::string SizeLabel(Bytes size);

}  // namespace genie::workload
