// Chakra custom collective: the per-rank traces (<prefix>.<rank>.et, optionally gzipped) that
// ASTRA-sim's converter lowers an MSCCL-IR algorithm into — COMM_SEND / COMM_RECV nodes named
// after their threadblock and step ("..._tb<T>_step<S>"), COMP nodes for the reductions — read
// into a CustomAlgorithm with trace/'s EtReader and attribute helpers. The nodes carry sizes
// but not byte ranges, so the ranges come from the MSCCL-IR the converter embeds in the
// metadata (attribute input_file). Errors name the file and node. Pure function; any thread.
#pragma once

#include <string>

#include "genie/common/status.h"
#include "genie/spec/custom_algorithm.h"

namespace genie::trace {

// `path`: the <prefix>, one rank's file, or a folder holding one family (as FindWorkload).
Result<spec::CustomAlgorithm> ReadChakraCustom(const std::string& path);

}  // namespace genie::trace
