// ReadTextFile: reads a whole configuration file into memory, turning OS errors into a Status
// that names the file. Shared by the config parsers; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie::config {

Result<std::string> ReadTextFile(const std::string& path, const char* what);

}  // namespace genie::config
