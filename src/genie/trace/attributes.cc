#include "genie/trace/attributes.h"

#include <cmath>

namespace genie::trace {
namespace {

using VC = Attr::ValueCase;

// Integer value of a scalar attribute, or nullopt when it is not an integer kind.
std::optional<int64_t> ScalarInt(const Attr& a, bool* unsigned_overflow) {
  *unsigned_overflow = false;
  switch (a.value_case()) {
    case VC::kInt32Val: return a.int32_val();
    case VC::kInt64Val: return a.int64_val();
    case VC::kUint32Val: return static_cast<int64_t>(a.uint32_val());
    case VC::kUint64Val:
      if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX)) *unsigned_overflow = true;
      return static_cast<int64_t>(a.uint64_val());
    case VC::kSint32Val: return a.sint32_val();
    case VC::kSint64Val: return a.sint64_val();
    case VC::kFixed32Val: return static_cast<int64_t>(a.fixed32_val());
    case VC::kFixed64Val:
      if (a.fixed64_val() > static_cast<uint64_t>(INT64_MAX)) *unsigned_overflow = true;
      return static_cast<int64_t>(a.fixed64_val());
    case VC::kSfixed32Val: return a.sfixed32_val();
    case VC::kSfixed64Val: return a.sfixed64_val();
    case VC::kBoolVal: return a.bool_val() ? 1 : 0;
    default: return std::nullopt;
  }
}

template <typename Attrs>
const Attr* FindIn(const Attrs& attrs, std::string_view name) {
  for (const Attr& a : attrs) {
    if (a.name() == name && a.value_case() != VC::VALUE_NOT_SET) return &a;
  }
  return nullptr;
}

Status TypeError(const Attr& a, const char* wanted) {
  return Status::InvalidArgument("attribute '" + a.name() + "' is stored as " + AttrTypeName(a) +
                                 ", expected " + wanted);
}

}  // namespace

const Attr* FindAttr(const ChakraProtoMsg::Node& node, std::string_view name) {
  return FindIn(node.attr(), name);
}

const Attr* FindAttr(const ChakraProtoMsg::GlobalMetadata& metadata, std::string_view name) {
  return FindIn(metadata.attr(), name);
}

const char* AttrTypeName(const Attr& attr) {
  switch (attr.value_case()) {
    case VC::kDoubleVal: return "double";
    case VC::kDoubleList: return "double_list";
    case VC::kFloatVal: return "float";
    case VC::kFloatList: return "float_list";
    case VC::kInt32Val: return "int32";
    case VC::kInt32List: return "int32_list";
    case VC::kInt64Val: return "int64";
    case VC::kInt64List: return "int64_list";
    case VC::kUint32Val: return "uint32";
    case VC::kUint32List: return "uint32_list";
    case VC::kUint64Val: return "uint64";
    case VC::kUint64List: return "uint64_list";
    case VC::kSint32Val: return "sint32";
    case VC::kSint32List: return "sint32_list";
    case VC::kSint64Val: return "sint64";
    case VC::kSint64List: return "sint64_list";
    case VC::kFixed32Val: return "fixed32";
    case VC::kFixed32List: return "fixed32_list";
    case VC::kFixed64Val: return "fixed64";
    case VC::kFixed64List: return "fixed64_list";
    case VC::kSfixed32Val: return "sfixed32";
    case VC::kSfixed32List: return "sfixed32_list";
    case VC::kSfixed64Val: return "sfixed64";
    case VC::kSfixed64List: return "sfixed64_list";
    case VC::kBoolVal: return "bool";
    case VC::kBoolList: return "bool_list";
    case VC::kStringVal: return "string";
    case VC::kStringList: return "string_list";
    case VC::kBytesVal: return "bytes";
    case VC::kBytesList: return "bytes_list";
    case VC::VALUE_NOT_SET: return "unset";
  }
  return "unknown";
}

Result<std::optional<int64_t>> GetInt(const ChakraProtoMsg::Node& node, std::string_view name) {
  const Attr* a = FindAttr(node, name);
  if (a == nullptr) return std::optional<int64_t>();
  bool overflow = false;
  if (auto v = ScalarInt(*a, &overflow)) {
    if (overflow) {
      return Status::InvalidArgument("attribute '" + a->name() + "' (" + AttrTypeName(*a) +
                                     ") value " + std::to_string(static_cast<uint64_t>(*v)) +
                                     " does not fit in int64");
    }
    return std::optional<int64_t>(*v);
  }
  double d = 0;
  if (a->value_case() == VC::kDoubleVal) d = a->double_val();
  else if (a->value_case() == VC::kFloatVal) d = a->float_val();
  else return TypeError(*a, "an integer");
  if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18) {
    return Status::InvalidArgument("attribute '" + a->name() + "' is the non-integer " +
                                   std::to_string(d) + ", expected an integer");
  }
  return std::optional<int64_t>(static_cast<int64_t>(d));
}

Result<std::optional<uint64_t>> GetUint(const ChakraProtoMsg::Node& node, std::string_view name) {
  const Attr* a = FindAttr(node, name);
  if (a != nullptr && (a->value_case() == VC::kUint64Val || a->value_case() == VC::kFixed64Val)) {
    return std::optional<uint64_t>(a->value_case() == VC::kUint64Val ? a->uint64_val()
                                                                     : a->fixed64_val());
  }
  GENIE_ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(node, name));
  if (!v) return std::optional<uint64_t>();
  if (*v < 0) {
    return Status::InvalidArgument("attribute '" + std::string(name) + "' is negative (" +
                                   std::to_string(*v) + "), expected a size or count");
  }
  return std::optional<uint64_t>(static_cast<uint64_t>(*v));
}

Result<std::optional<bool>> GetBool(const ChakraProtoMsg::Node& node, std::string_view name) {
  const Attr* a = FindAttr(node, name);
  if (a == nullptr) return std::optional<bool>();
  bool overflow = false;
  if (auto v = ScalarInt(*a, &overflow)) return std::optional<bool>(*v != 0);
  return TypeError(*a, "a bool or integer flag");
}

namespace {
Result<std::optional<std::string>> StringOf(const Attr* a) {
  if (a == nullptr) return std::optional<std::string>();
  if (a->value_case() == VC::kStringVal) return std::optional<std::string>(a->string_val());
  if (a->value_case() == VC::kBytesVal) return std::optional<std::string>(a->bytes_val());
  bool overflow = false;
  // Some writers store pg_name as a number.
  if (auto v = ScalarInt(*a, &overflow); v && !overflow) {
    return std::optional<std::string>(std::to_string(*v));
  }
  return TypeError(*a, "a string");
}
}  // namespace

Result<std::optional<std::string>> GetString(const ChakraProtoMsg::Node& node,
                                             std::string_view name) {
  return StringOf(FindAttr(node, name));
}

Result<std::optional<std::string>> GetString(const ChakraProtoMsg::GlobalMetadata& metadata,
                                             std::string_view name) {
  return StringOf(FindAttr(metadata, name));
}

Result<std::optional<std::vector<bool>>> GetBoolList(const ChakraProtoMsg::Node& node,
                                                     std::string_view name) {
  const Attr* a = FindAttr(node, name);
  if (a == nullptr) return std::optional<std::vector<bool>>();
  std::vector<bool> out;
  auto take = [&out](const auto& list) {
    for (auto v : list.values()) out.push_back(v != 0);
  };
  switch (a->value_case()) {
    case VC::kBoolList: take(a->bool_list()); break;
    case VC::kInt32List: take(a->int32_list()); break;
    case VC::kInt64List: take(a->int64_list()); break;
    case VC::kUint32List: take(a->uint32_list()); break;
    case VC::kUint64List: take(a->uint64_list()); break;
    case VC::kSint32List: take(a->sint32_list()); break;
    case VC::kSint64List: take(a->sint64_list()); break;
    default: {
      bool overflow = false;
      auto v = ScalarInt(*a, &overflow);
      if (!v) return TypeError(*a, "a bool list");
      out.push_back(*v != 0);
    }
  }
  return std::optional<std::vector<bool>>(std::move(out));
}

namespace {
Attr* NewAttr(ChakraProtoMsg::Node* node, std::string_view name) {
  Attr* a = node->add_attr();
  a->set_name(std::string(name));
  return a;
}
}  // namespace

void AddInt64(ChakraProtoMsg::Node* node, std::string_view name, int64_t value) {
  NewAttr(node, name)->set_int64_val(value);
}
void AddInt32(ChakraProtoMsg::Node* node, std::string_view name, int32_t value) {
  NewAttr(node, name)->set_int32_val(value);
}
void AddUint64(ChakraProtoMsg::Node* node, std::string_view name, uint64_t value) {
  NewAttr(node, name)->set_uint64_val(value);
}
void AddBool(ChakraProtoMsg::Node* node, std::string_view name, bool value) {
  NewAttr(node, name)->set_bool_val(value);
}
void AddString(ChakraProtoMsg::Node* node, std::string_view name, std::string_view value) {
  NewAttr(node, name)->set_string_val(std::string(value));
}
void AddBoolList(ChakraProtoMsg::Node* node, std::string_view name,
                 const std::vector<bool>& values) {
  auto* list = NewAttr(node, name)->mutable_bool_list();
  for (bool v : values) list->add_values(v);
}

}  // namespace genie::trace
