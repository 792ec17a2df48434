// Reading and writing whole files in tests. Test-only; any thread may call.
#pragma once

#include <string>

namespace genie::testing {

// The whole content of a file, bytes as they are ("" when it cannot be read).
std::string ReadFile(const std::string& path);
// Writes `text` to `path` (replacing it); returns `path`.
std::string WriteFile(const std::string& path, const std::string& text);

}  // namespace genie::testing
