// DecodeOp: turns one raw Chakra Node into an Op, resolving every quirk of real traces
// (attribute widths, defaults as ASTRA-sim has them, CPU-side collective wrappers, implied
// peers, pg_name normalisation). Quirks that are tolerated are reported as named Quirks so
// the caller can warn once per name; anything that cannot be run is an error naming the file,
// rank and node and saying what to do. Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "et_def.pb.h"
#include "genie/common/status.h"
#include "genie/workload/op.h"
#include "genie/workload/read_options.h"

namespace genie::workload {

// Names of tolerated quirks (warnings) and of errors, as they appear in messages and docs.
inline constexpr const char* kWarnCpuCollectiveWrapper = "cpu-collective-wrapper";
inline constexpr const char* kWarnDefaultCommSize = "default-comm-size";
inline constexpr const char* kWarnP2pSizeFromTensorSize = "p2p-size-from-tensor-size";
inline constexpr const char* kWarnCtrlDepMissing = "ctrl-dep-missing";
inline constexpr const char* kWarnCtrlDepCycle = "ctrl-dep-cycle";
inline constexpr const char* kErrMissingCommSize = "missing-comm-size";
inline constexpr const char* kErrMissingCommType = "missing-comm-type";
inline constexpr const char* kErrUnknownCollectiveType = "unknown-collective-type";
inline constexpr const char* kErrUnknownNodeType = "unknown-node-type";
inline constexpr const char* kErrBadAttribute = "bad-attribute";
inline constexpr const char* kErrDuplicateNodeId = "duplicate-node-id";
inline constexpr const char* kErrDataDepMissing = "data-dep-missing";
inline constexpr const char* kErrDataDepCycle = "data-dep-cycle";
inline constexpr const char* kErrCtrlDepMissing = "ctrl-dep-missing";  // with --ctrl-deps on
inline constexpr const char* kErrCtrlDepCycle = "ctrl-dep-cycle";      // with --ctrl-deps on

struct Quirk {
  const char* name;     // one of the kWarn* names
  std::string message;  // about this node, for the first occurrence
};

// `path` and `rank` only name the node in messages. Appends tolerated quirks to `quirks`.
Result<Op> DecodeOp(const ChakraProtoMsg::Node& node, int rank, const std::string& path,
                    const ReadOptions& options, std::vector<Quirk>* quirks);

}  // namespace genie::workload
