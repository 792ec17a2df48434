// Guarding the inputs of `genie results merge | strip` from their own outputs: an output path
// that names one of the inputs (the same file by any path: relative, absolute, through a
// symlink or a hard link) would replace a file the user meant to keep. Reads the file system
// (stat); any thread.
#pragma once

#include <string>
#include <vector>

#include "genie/common/status.h"

namespace genie::report {

// InvalidArgument naming the output and the input it would overwrite, or two outputs that name
// one file; Ok otherwise.
Status CheckOutputsAreNotInputs(const std::vector<std::string>& outputs,
                                const std::vector<std::string>& inputs);

}  // namespace genie::report
