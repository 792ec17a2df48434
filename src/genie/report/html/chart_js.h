// Chart.js, the charting library the report page inlines: Debian's libjs-chart.js (MIT,
// /usr/share/javascript/chart.js/chart.min.js). It is embedded into the genie binary at build
// time when the package is on the build machine (scripts/install-deps.sh installs it), so that
// any rank that writes a report — often on a cluster node without the package — can; a build
// without it reads the file at run time from the same path ($GENIE_CHARTJS overrides) and says
// what to install when it is missing. Either way the page itself needs no network. Any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie::report::html {

inline constexpr const char* kChartJsPath = "/usr/share/javascript/chart.js/chart.min.js";

// True when this binary carries Chart.js (it was found at build time).
bool ChartJsEmbedded();
// The library's source: the embedded copy, else the file's content.
Result<std::string> ChartJs();

}  // namespace genie::report::html
