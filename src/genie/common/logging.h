// Logging setup: spdlog to stderr, tagged with the rank when one is known. Code logs with
// spdlog::info/warn/error directly; call SetupLogging once at start, from the main thread.
// WarnOnce: for what every repetition of a step would say again (a trace's warnings, read by
// each of a prediction's simulations); any thread.
#pragma once

#include <string>

namespace genie {

// verbosity: 0 = warnings and errors, 1 = info, 2 = debug, 3 = trace.
void SetupLogging(int verbosity, int rank = -1);

// spdlog::warn(message) the first time this process is given this message; later: nothing.
void WarnOnce(const std::string& message);

}  // namespace genie
