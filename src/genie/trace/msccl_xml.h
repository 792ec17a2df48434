// MSCCL-IR XML: the intermediate form MSCCLang, TACCL and TACOS emit for a custom collective
// (<algo> with per-<gpu> threadblocks <tb> of <step>s), read into a CustomAlgorithm. Each
// (peer, channel) connection is a FIFO, so threadblocks are enumerated by channel; a threadblock's
// steps run in order, and depid/deps add cross-threadblock dependencies. Only in-place
// algorithms over the input buffer are supported. Errors say "file:line: reason" and what to
// change. Pure functions (pugixml documents are local); any thread.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::trace {

// Limits on what a file may ask for (each is an error naming the file and line): chunks per
// buffer (the planner cuts every collective into this many ranges) and channels (connections
// per peer pair, the planner's own limit). Ranks are bounded by the file: one <gpu> each.
inline constexpr int kMaxMscclChunks = 1 << 16;
inline constexpr int kMaxMscclChannels = 65535;

// Parses MSCCL-IR XML text; `name` (a file name) starts every error ("name:12: ...").
Result<spec::CustomAlgorithm> ParseMscclXml(const std::string& text, const std::string& name);

// Reads and parses the file at `path`.
Result<spec::CustomAlgorithm> ReadMscclXml(const std::string& path);

}  // namespace genie::trace
