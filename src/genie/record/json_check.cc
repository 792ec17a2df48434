#include "genie/record/json_check.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <type_traits>

namespace genie::record {

using nlohmann::json;

int JsonNestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (c == '\n') {
      // A string never spans lines in valid JSON; resync so that one damaged line cannot hide
      // the brackets of the rest of the text.
      in_string = escaped = false;
      continue;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Result<json> ParseJson(std::string_view text, const std::string& where) {
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    return Status::Corruption(fmt::format(
        "{}: JSON nested more than {} levels deep; genie's results files nest a few levels, so "
        "this is not one of them (give a results JSON, a rank's .jsonl stream or a Chrome trace "
        "written by genie)",
        where, kMaxJsonDepth));
  }
  json j;
  try {
    j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  } catch (const json::exception& ex) {  // allow_exceptions covers parsing; stay safe anyway
    return Status::Corruption(fmt::format("{}: not valid JSON ({})", where, ex.what()));
  }
  if (j.is_discarded()) return Status::Corruption(fmt::format("{}: not valid JSON", where));
  return j;
}

std::string DescribeJsonType(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number with a fraction";
    default:
      return "a binary value";
  }
}

bool HasField(const json& j, const char* key) {
  if (!j.is_object()) return false;
  auto it = j.find(key);
  return it != j.end() && !it->is_null();
}

std::string StringField(const json& j, const char* key, const std::string& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

int64_t IntField(const json& j, const char* key, int64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return fallback;
  }
  return it->get<int64_t>();
}

uint64_t UintField(const json& j, const char* key, uint64_t fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return fallback;
  if (!it->is_number_unsigned() && it->get<int64_t>() < 0) return fallback;
  return it->get<uint64_t>();
}

namespace {

// The value as shown in a message, shortened.
std::string Shown(const json& v) {
  if (v.is_object() || v.is_array()) return "";
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return " (" + s + ")";
}

}  // namespace

FieldReader::FieldReader(const json& value, std::string where, std::string remedy)
    : value_(value), where_(std::move(where)), remedy_(std::move(remedy)) {
  if (!value_.is_object()) {
    Fail(fmt::format("should be a JSON object, found {}{}", DescribeJsonType(value_),
                     Shown(value_)));
  }
}

void FieldReader::Fail(const std::string& what) {
  if (!status_.ok()) return;
  status_ = Status::Corruption(fmt::format("{}{}{}{}{}", where_, where_.empty() ? "" : ": ", what,
                                           remedy_.empty() ? "" : "; ", remedy_));
}

void FieldReader::FailField(const char* key, const std::string& what) {
  Fail(fmt::format("field \"{}\" {}", key, what));
}

const json* FieldReader::Find(const char* key, bool required) {
  if (!ok()) return nullptr;
  auto it = value_.find(key);
  if (it == value_.end() || it->is_null()) {
    if (required) FailField(key, "is missing");
    return nullptr;
  }
  return &*it;
}

template <typename T>
FieldReader& FieldReader::Integer(const char* key, T* out, bool required) {
  const json* v = Find(key, required);
  if (v == nullptr) return *this;
  auto bad = [&] {
    FailField(key,
              fmt::format("should be an integer, found {}{}", DescribeJsonType(*v), Shown(*v)));
  };
  constexpr auto lo = std::numeric_limits<T>::min();
  constexpr auto hi = std::numeric_limits<T>::max();
  auto range = [&] {
    FailField(key, fmt::format("is out of range ({} is not within {}..{})", v->dump(), lo, hi));
  };
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return range(), *this;
    *out = static_cast<T>(u);
  } else if (v->is_number_integer()) {
    const int64_t s = v->get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (s < 0) return range(), *this;
      *out = static_cast<T>(s);
    } else {
      if (s < static_cast<int64_t>(lo) || s > static_cast<int64_t>(hi)) return range(), *this;
      *out = static_cast<T>(s);
    }
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) return bad(), *this;
    if (d < static_cast<double>(lo) || d >= static_cast<double>(hi)) return range(), *this;
    *out = static_cast<T>(d);
  } else {
    bad();
  }
  return *this;
}

FieldReader& FieldReader::Required(const char* key, int* out) { return Integer(key, out, true); }
FieldReader& FieldReader::Required(const char* key, int64_t* out) {
  return Integer(key, out, true);
}
FieldReader& FieldReader::Optional(const char* key, int* out) { return Integer(key, out, false); }
FieldReader& FieldReader::Optional(const char* key, int64_t* out) {
  return Integer(key, out, false);
}
FieldReader& FieldReader::Optional(const char* key, uint64_t* out) {
  return Integer(key, out, false);
}

FieldReader& FieldReader::Optional(const char* key, bool* out) {
  const json* v = Find(key, false);
  if (v == nullptr) return *this;
  if (!v->is_boolean()) {
    FailField(key,
              fmt::format("should be true or false, found {}{}", DescribeJsonType(*v), Shown(*v)));
    return *this;
  }
  *out = v->get<bool>();
  return *this;
}

namespace {

bool ReadString(FieldReader& r, const json* v, const char* key, std::string* out) {
  if (v == nullptr) return false;
  if (!v->is_string()) {
    r.FailField(key,
                fmt::format("should be a string, found {}{}", DescribeJsonType(*v), Shown(*v)));
    return false;
  }
  *out = v->get<std::string>();
  return true;
}

}  // namespace

FieldReader& FieldReader::Required(const char* key, std::string* out) {
  ReadString(*this, Find(key, true), key, out);
  return *this;
}

FieldReader& FieldReader::Optional(const char* key, std::string* out) {
  ReadString(*this, Find(key, false), key, out);
  return *this;
}

const json* FieldReader::Array(const char* key, bool required) {
  const json* v = Find(key, required);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    FailField(key, fmt::format("should be an array, found {}{}", DescribeJsonType(*v), Shown(*v)));
    return nullptr;
  }
  return v;
}

const json* FieldReader::Object(const char* key, bool required) {
  const json* v = Find(key, required);
  if (v == nullptr) return nullptr;
  if (!v->is_object()) {
    FailField(key, fmt::format("should be an object, found {}{}", DescribeJsonType(*v), Shown(*v)));
    return nullptr;
  }
  return v;
}

}  // namespace genie::record
