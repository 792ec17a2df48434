// Fault: one change to a testbed link — its rate or queue on one direction or both, random
// loss, added delay and jitter, down/up, flapping — optionally undone after a while, and when
// it should happen in a run (seconds after the start, or at the start of an iteration). Parsed
// from a fault schedule (YAML, docs/testbed.md) or from `genie testbed fault` flags. Pure data;
// injector.h applies it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::testbed {

enum class FaultKind { kRate, kQueue, kLoss, kDelay, kDown, kUp, kFlap };

// Relative to the link's first end (a host for host links, the leaf for l0-s1): out = a -> b,
// in = b -> a.
enum class Direction { kBoth, kOut, kIn };

struct Fault {
  FaultKind kind = FaultKind::kRate;
  std::string link;  // h3, h3:1, l0-s1
  Direction direction = Direction::kBoth;
  uint64_t rate_bps = 0;  // kRate
  Bytes queue_bytes = 0;  // kQueue
  double loss = 0;        // kLoss, probability 0..1
  TimeNs delay = 0;       // kDelay
  TimeNs jitter = 0;      // kDelay, uniform +-jitter
  int flaps = 0;          // kFlap: down/up this many times
  TimeNs period = kNsPerSec;  // kFlap: one down+up cycle
  TimeNs duration = 0;    // > 0: undone this long after it took effect
  // When, in a run: `at` after the run's start, or at the start of measured iteration
  // `iteration` (1-based) plus `at`.
  TimeNs at = 0;
  int iteration = 0;  // 0: not tied to an iteration

  std::string Describe() const;  // "h3 out: rate 200mbit for 2s"
};

const char* KindName(FaultKind kind);
const char* DirectionName(Direction direction);
Result<Direction> ParseDirection(const std::string& text);
// Checks ranges (loss in (0, 1), delay <= 10 s, flaps 1..1000, ...).
Status ValidateFault(const Fault& fault);

// A schedule file: `faults:` list (and an optional `testbed:` name). Entries with `rank:` are
// compute faults (compute/compute_fault.h reads them): counted here, not read.
struct FaultSchedule {
  std::string testbed;  // "" when the file does not say
  std::vector<Fault> faults;
  int compute_faults = 0;
};
Result<FaultSchedule> ParseFaultSchedule(const std::string& text, const std::string& origin);
Result<FaultSchedule> LoadFaultSchedule(const std::string& path);

}  // namespace genie::testbed
