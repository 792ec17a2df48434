// Rendezvous: how the ranks of one job learn each other's transport addresses before they
// connect. Two kinds, chosen by a spec string:
//   "dir:/path"       each rank writes /path/<job>.<rank>.addr (atomically, by rename) and waits
//                     for all the others' files — for ranks sharing a filesystem (genie launch,
//                     network namespaces on one machine).
//   "tcp:host:port"   rank 0 serves a tiny store on host:port; every other rank connects, sends
//                     its job id, rank and address, and receives the full table when all have
//                     arrived (torchrun's MASTER_ADDR/MASTER_PORT). A client of another job is
//                     refused and logged.
// Either way the exchange is also a barrier: nobody returns before every rank has published.
// Blocking, with a timeout; call before the event loop starts. Any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

struct RendezvousRequest {
  std::string spec;  // "dir:/path" or "tcp:host:port"
  std::string job_id;
  int rank = 0;
  int world_size = 1;
  std::string my_address;  // what this rank publishes
  TimeNs timeout = 30 * kNsPerSec;
};

// Returns every rank's address, indexed by rank. The error names the ranks that never showed.
Result<std::vector<std::string>> ExchangeAddresses(const RendezvousRequest& request);

// Takes this rank's published address back (dir: removes its file) once every peer that needs
// it has connected, so the next job in the same directory cannot read a stale one.
void WithdrawAddress(const RendezvousRequest& request);

}  // namespace genie::net
