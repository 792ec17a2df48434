// HostSysctls: each testbed host's TCP defaults as its network namespace has them — the
// congestion control (net.ipv4.tcp_congestion_control) and ECN (net.ipv4.tcp_ecn) that a
// program run there gets unless it sets its own — read from outside with `ip netns exec NS
// sysctl -n ...`. `genie testbed calibrate` records them with its calibration (calibration.h);
// a run's ranks read their own from inside (record/host_settings.h). Reads only; one Shell per
// thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

struct HostSysctls {
  std::string host;  // h3
  std::string tcp_congestion;
  std::string tcp_ecn;
};

// Every host's, in layout order. An error names the host whose namespace could not be read.
Result<std::vector<HostSysctls>> ReadHostSysctls(const Layout& layout, Shell& shell);

}  // namespace genie::testbed
