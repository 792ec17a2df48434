// Where tests find their inputs: the test data folder (GENIE_DATA_DIR: tests/data unless
// configured otherwise) and the source tree. Test-only; any thread may call.
#pragma once

#include <string>

namespace genie::testing {

// A path under the test data folder, e.g. Data("astra-sim-configs/x.yml").
std::string Data(const std::string& relative);
// A path under the source tree, e.g. Source("tests/golden/inspect").
std::string Source(const std::string& relative);

}  // namespace genie::testing
