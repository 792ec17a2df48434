// Names genie writes into results files for op kinds and collective types, and their parsers.
// record/ and report/ keep their own table (rather than genie_workload's) so that results files
// can be read and written without the workload library. Spelling matches the CLI's
// ("all_reduce", "send"). Pure functions; any thread.
#pragma once

#include <optional>
#include <string_view>

#include "genie/workload/op.h"

namespace genie::record {

const char* KindName(OpKind kind);                  // "compute", "collective", "send", ...
const char* CollectiveName(CollectiveType type);    // "all_reduce", "all_gather", ...
std::optional<OpKind> ParseKind(std::string_view name);
std::optional<CollectiveType> ParseCollective(std::string_view name);

}  // namespace genie::record
