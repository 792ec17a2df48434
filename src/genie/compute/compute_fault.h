// ComputeFault: one change to a rank's compute in a fault schedule (`genie run --faults`,
// `genie simulate --faults`; docs/testbed.md "Compute faults"): its GPU compute slowed by a
// factor, a stall at an iteration's start (once or every N iterations), jitter on each compute
// op (a named distribution and seed), or a ramp (a factor that deepens over iterations). Each
// holds from a measured iteration (1-based, as network faults count them) for a number of
// iterations or to the end. Time is counted in iterations, never seconds, so a real run and its
// prediction slow exactly the same ops.
//
// A schedule file holds network faults (`link:`, testbed/fault.h) and compute faults (`rank:`)
// in one `faults:` list; this file reads the compute ones and counts the others. Pure data and
// parsing; any thread. faulted_compute.h says what a schedule does to one rank's ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::compute {

enum class ComputeFaultKind { kSlow, kStall, kJitter, kRamp };
enum class JitterDistribution { kNormal, kUniform, kLognormal };

struct ComputeFault {
  ComputeFaultKind kind = ComputeFaultKind::kSlow;
  int entry = 0;            // its position in the file's `faults:` list, from 1
  std::vector<int> ranks;   // sorted; empty = every rank (`rank: all`)
  int iteration = 1;        // the first measured iteration it holds in (1-based)
  int iterations = 0;       // how many it holds in; 0 = to the end of the run
  double factor = 1;        // kSlow: compute takes factor x the trace's time
  double from = 1, to = 1;  // kRamp: factor `from` at `iteration`, rising linearly ...
  int over = 1;             // ... to `to` `over` iterations later, then holding
  TimeNs stall = 0;         // kStall: the rank does nothing this long at the iteration's start
  int every = 0;            // kStall: again every this many iterations; 0 = once
  double sd = 0;            // kJitter: standard deviation of the factor (mean 1), 0.1 = 10 %
  JitterDistribution distribution = JitterDistribution::kNormal;
  uint64_t seed = 1;

  bool HasRank(int rank) const;
  // Whether it holds on `rank` in measured iteration `iteration` (1-based; <= 0: warm-up, never).
  bool Covers(int rank, int iteration) const;
  // "rank 3: compute 1.5x from iteration 5 for 2 iterations".
  std::string Describe() const;
};

const char* KindName(ComputeFaultKind kind);
const char* DistributionName(JitterDistribution distribution);

struct ComputeFaultSchedule {
  std::string origin;                // the file, for messages
  std::vector<ComputeFault> faults;  // in the file's order
  int network_faults = 0;            // entries with `link:` (testbed/fault.h reads them)
};

// Reads the compute faults of a schedule (entries with `rank:`); errors name `origin`, the
// entry and what to write instead. Entries with `link:` are counted, not read.
Result<ComputeFaultSchedule> ParseComputeFaults(const std::string& text, const std::string& origin);
Result<ComputeFaultSchedule> LoadComputeFaults(const std::string& path);
// Every rank a fault names is one of the job's `world_size` ranks.
Status CheckRanks(const ComputeFaultSchedule& schedule, int world_size);

}  // namespace genie::compute
