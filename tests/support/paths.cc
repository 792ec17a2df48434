#include "tests/support/paths.h"

namespace genie::testing {

std::string Data(const std::string& relative) {
  return std::string(GENIE_DATA_DIR) + "/" + relative;
}

std::string Source(const std::string& relative) {
  return std::string(GENIE_SOURCE_DIR) + "/" + relative;
}

}  // namespace genie::testing
