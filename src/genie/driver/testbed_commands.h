// Testbed commands: what `genie testbed up | down | list | fault` do once their flags are
// parsed — build or remove a testbed and say what was done, list the testbeds that are up,
// apply a fault now or play a timed one (--for, --flap) in the foreground, describe it as a
// network.yml. The testbed itself
// is src/genie/testbed/; status and calibration are testbed/status.h and testbed_calibrate.h.
// Each prints its result on stdout and returns the error for the CLI to print (it names the
// testbed, the link or the flag).
//
// Threading: the CLI's main thread; a timed fault sleeps on it until it is undone.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/testbed/fault.h"
#include "genie/testbed/spec.h"

namespace genie::driver {

// Lays out `spec` and builds it (or, with `dry_run`, prints the commands it would run), then
// says how large it is, how long it took and how to run on it.
Status TestbedUp(const testbed::TestbedSpec& spec, bool dry_run);
// Removes testbed `name` after checking this process may.
Status TestbedDown(const std::string& name);
// One line per testbed that is up: name, topology, hosts, rate (or why its description is
// damaged).
std::string TestbedListText();
// Checks `fault` against testbed `name` and plays it: applied now, undone after its duration,
// a flap's downs and ups on their schedule; one line per action.
Status TestbedFault(const std::string& name, const testbed::Fault& fault);
// Every fault on testbed `name` undone: links up, shaping as described, no rules, no helpers.
Status TestbedClearFaults(const std::string& name);
// Testbed `name` as a network.yml (testbed::TestbedNetworkYml), with the calibration measured
// under the settings a run on it now would have: its hosts' and links' as they are, with
// `tcp_congestion` on the sockets when given (as `genie run --tcp-congestion`). `note` says which
// calibration, and when none was measured under those settings that the latest stands in.
Result<std::string> TestbedNetworkYmlNow(const std::string& name, int ranks_per_host,
                                         double one_way_latency_ns,
                                         const std::string& tcp_congestion, std::string* note);

}  // namespace genie::driver
