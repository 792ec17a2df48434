// Typed access to Chakra node attributes that tolerates how real writers differ: an integer
// attribute may be stored as int32, int64, uint32, uint64, sint32, sint64, fixed or sfixed of
// either width, or bool; a flag may be a bool or an integer; a bool list may be a list of
// bools or of integers. Reading one stored width as another (comm_size as uint64 read as
// int64 = 0) is a long-lived bug in other readers. Errors say which attribute and what type it
// had; callers add file, rank and node. Also setters used by writers. Pure; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "et_def.pb.h"
#include "genie/common/status.h"

namespace genie::trace {

using Attr = ChakraProtoMsg::AttributeProto;

// First attribute named `name` with a value set, else nullptr.
const Attr* FindAttr(const ChakraProtoMsg::Node& node, std::string_view name);
// "int64", "uint64", "bool", "string", "unset", ... (for messages and the inspector).
const char* AttrTypeName(const Attr& attr);

// nullopt when absent. An integral double/float is accepted; a string or list is an error.
Result<std::optional<int64_t>> GetInt(const ChakraProtoMsg::Node& node, std::string_view name);
// As GetInt, but a negative value is an error (sizes, counts).
Result<std::optional<uint64_t>> GetUint(const ChakraProtoMsg::Node& node, std::string_view name);
// bool, or any integer (non-zero = true).
Result<std::optional<bool>> GetBool(const ChakraProtoMsg::Node& node, std::string_view name);
Result<std::optional<std::string>> GetString(const ChakraProtoMsg::Node& node,
                                             std::string_view name);
// bool list or any integer list; a single bool/int is a list of one.
Result<std::optional<std::vector<bool>>> GetBoolList(const ChakraProtoMsg::Node& node,
                                                     std::string_view name);

// The same lookups on a trace's GlobalMetadata (e.g. "input_file", the MSCCL-IR a custom
// collective trace was lowered from).
const Attr* FindAttr(const ChakraProtoMsg::GlobalMetadata& metadata, std::string_view name);
Result<std::optional<std::string>> GetString(const ChakraProtoMsg::GlobalMetadata& metadata,
                                             std::string_view name);

// Appenders for writers (no check for an existing attribute of the same name).
void AddInt64(ChakraProtoMsg::Node* node, std::string_view name, int64_t value);
void AddInt32(ChakraProtoMsg::Node* node, std::string_view name, int32_t value);
void AddUint64(ChakraProtoMsg::Node* node, std::string_view name, uint64_t value);
void AddBool(ChakraProtoMsg::Node* node, std::string_view name, bool value);
void AddString(ChakraProtoMsg::Node* node, std::string_view name, std::string_view value);
void AddBoolList(ChakraProtoMsg::Node* node, std::string_view name,
                 const std::vector<bool>& values);

}  // namespace genie::trace
