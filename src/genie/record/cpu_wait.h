// CPU wait: how long a thread was ready to run but waited for a core — the scheduler's
// run-queue delay (/proc/thread-self/schedstat, second field). A rank's thread that waits for
// a core wakes late from its compute sleeps and reads its sockets late, so the step it
// measures carries genie's own machine, not only the network (ranks outnumbering cores, a busy
// neighbour, a stolen vCPU). Real runs record it per iteration (RankSummary::cpu_wait_ns), so
// the summary and the prediction can say where the host CPU, not the link, set the time.
// Reads of /proc; any thread (each reads its own thread's figures).
#pragma once

#include <optional>
#include <string>

#include "genie/common/units.h"

namespace genie::record {

struct ThreadCpuTimes {
  TimeNs run_ns = 0;   // on a core
  TimeNs wait_ns = 0;  // runnable, waiting for a core
};

// From the text of a schedstat file ("run_ns wait_ns timeslices"); nullopt when malformed.
std::optional<ThreadCpuTimes> ParseSchedstat(const std::string& text);
// The calling thread's, now; nullopt where the kernel has no schedstat (CONFIG_SCHED_INFO off).
std::optional<ThreadCpuTimes> ReadThreadCpuTimes();

// Above this share of an iteration spent waiting for a core, that iteration's time is the
// host CPU's as much as the network's: the size of the band a healthy prediction holds
// (measured / predicted within 0.95-1.05, docs/prediction.md). gpt_dp2_tp2_pp2 on a star:8
// testbed at 400 Mbit/s, with two compilers beside it on the 2 cores (load 9): ranks waited
// 2-16 % of each iteration (docs/metrics.md, "CPU wait").
inline constexpr double kNotableCpuWaitFraction = 0.05;

}  // namespace genie::record
