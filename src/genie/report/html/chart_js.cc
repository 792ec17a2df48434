#include "genie/report/html/chart_js.h"

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace genie::report::html {

// Generated from Debian's chart.min.js by cmake/EmbedResource.cmake (empty when the build
// machine lacked libjs-chart.js).
extern const char kChartJsSource[];
extern const std::size_t kChartJsSource_size;

bool ChartJsEmbedded() { return kChartJsSource_size > 0; }

Result<std::string> ChartJs() {
  if (ChartJsEmbedded()) return std::string(kChartJsSource, kChartJsSource_size);
  const char* env = std::getenv("GENIE_CHARTJS");
  const std::string path = env != nullptr && *env != '\0' ? env : kChartJsPath;
  std::ifstream in(path);
  std::stringstream text;
  if (in) text << in.rdbuf();
  if (!in || text.str().empty()) {
    return Status::NotFound(
        path +
        ": Chart.js not found; this genie was built without it, so the report reads it "
        "here: install Debian's libjs-chart.js (apt-get install libjs-chart.js) or point "
        "$GENIE_CHARTJS at chart.min.js (3.x)");
  }
  return text.str();
}

}  // namespace genie::report::html
