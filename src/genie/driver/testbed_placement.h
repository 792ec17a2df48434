// Testbed placement: how `genie launch --testbed NAME` puts a job's ranks on a `genie testbed`.
// Rank i runs on host i mod H, inside that host's namespace, bound to its NIC k = (i / H) mod
// NICs; its environment names the testbed (GENIE_TESTBED: rank 0 records the testbed's
// counters), the host (GENIE_HOST, what genie doctor calls it) and the NIC's address
// (GENIE_BIND, what --bind defaults to); unless given, the rendezvous is on h0's address.
//
// Threading: the launcher's main thread, before it starts the ranks.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/launch/local_launcher.h"

namespace genie::driver {

// Fills `options->sites` (and the rendezvous when empty) for `options->ranks` ranks on testbed
// `name`. A testbed is one machine: `nodes` other than 1 is refused, as is a testbed that is
// not up (the error says so).
Status PlaceOnTestbed(const std::string& name, int nodes, launch::LaunchOptions* options);

// This program's own path (/proc/self/exe), for running genie again as a child; "genie" (found
// in PATH) when it cannot be read.
std::string SelfExe();

}  // namespace genie::driver
