// Traffic: the background job of a jobs file (`type: traffic`, docs/jobs.md) — bulk TCP flows
// that load the fabric without a second workload. Ranks come in pairs: rank 2p sends to rank
// 2p+1 over `parallel` connections (the receiver listens on its bind address, the pair meet at
// the job's rendezvous), at `rate` or as fast as TCP goes, for `duration` / `bytes` or until
// stopped (SIGTERM/SIGINT: a clean stop, exit 0), optionally in on/off periods.
// Each rank appends what it moved to <output>/traffic-rank-<r>.jsonl as it goes (a header line, a
// sample of cumulative bytes every `interval`, on/off edges, an end line; wall-clock ns), so a
// job killed mid-way still says what it sent; WriteTrafficResults joins them into
// traffic.json: per pair its hosts, bytes sent and received, goodput over time, on windows.
//
// RunTraffic is a rank's whole life: main thread, one poll loop, no other thread.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/driver/jobs_spec.h"

namespace genie::driver {

struct TrafficOptions {
  int parallel = 1;
  uint64_t rate_bps = 0;  // per pair; 0: unpaced
  Bytes bytes = 0;        // per pair; 0: no limit
  TimeNs duration_ns = 0;  // 0: until `bytes` or a stop signal
  TimeNs on_ns = 0;
  TimeNs off_ns = 0;
  TimeNs interval_ns = 100 * kNsPerMs;  // between samples
  std::string output = "genie-traffic";
  std::string bind = "127.0.0.1";  // $GENIE_BIND under genie launch --testbed
  std::string rendezvous;          // default: the launcher's
  std::string job_id;
  TimeNs connect_timeout = 30 * kNsPerSec;
};

// Runs this rank (rank and world from the launcher's environment; the world must be even).
// Returns the exit code: 0 done or stopped, 1 the network failed, 2 bad input.
int RunTraffic(const TrafficOptions& options);

// Joins the rank files of traffic job `job` (placed: its pairs' hosts are known) into
// JobResultsPath(job). Ranks that left no file are said to have none.
Status WriteTrafficResults(const JobsSpec& spec, const JobSpec& job);

}  // namespace genie::driver
