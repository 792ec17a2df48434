// Custom-algorithm files: where the one a system.json names is (ResolveCustomPath) and loading
// it by its form (LoadCustomAlgorithm: *.xml is MSCCL-IR, anything else a Chakra custom
// collective). Whoever reads the configuration calls these once, up front, and hands the loaded
// algorithm to the planner as data; nothing is cached here. Pure functions; any thread.
#pragma once

#include <memory>
#include <string>

#include "genie/common/status.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::trace {

// Reads the MSCCL-IR XML file or Chakra custom collective at `path` (see msccl_xml.h,
// chakra_custom.h); errors name the file and line or node.
Result<std::shared_ptr<const spec::CustomAlgorithm>> LoadCustomAlgorithm(const std::string& path);

// A custom-algorithm path as written in `config_path` (a system.json): an absolute path as is;
// a relative one against the config's folder first (where users keep it), then the working
// directory (where ASTRA-sim looks). A Chakra prefix counts as found when its rank-0 file
// (.0.et or .0.et.gz) exists. The error names the config and every place looked in.
Result<std::string> ResolveCustomPath(const std::string& written, const std::string& config_path);

}  // namespace genie::trace
