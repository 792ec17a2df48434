// NodeHeader: the few fields of a Chakra Node that the dependency index needs (id, type,
// ctrl_deps, data_deps), decoded straight from the protobuf wire bytes without building a Node
// message, so that the first pass over a large trace is fast and allocates little. The whole
// node is decoded later, lazily. Pure; any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "genie/common/status.h"

namespace genie::trace {

struct NodeHeader {
  uint64_t id = 0;
  uint64_t type = 0;  // ChakraProtoMsg::NodeType value as written (may be out of range)
  std::vector<uint64_t> ctrl_deps;
  std::vector<uint64_t> data_deps;
};

// Decodes `bytes` (one Node message) into `header`, reusing its vectors. Errors describe the
// wire problem (bad varint, field running past the end, bad wire type); callers add the file
// and offset.
Status ScanNodeHeader(std::string_view bytes, NodeHeader* header);

}  // namespace genie::trace
