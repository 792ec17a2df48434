// Checking JSON that genie reads back from files (results JSON, rank streams, Chrome traces)
// against what it expects, without ever letting nlohmann::json throw: the text's nesting depth
// is bounded before parsing (nlohmann copies, compares and dumps recursively, so a deeply
// nested file would overflow the stack), and fields are read through FieldReader, which checks
// presence, type and range and keeps the first problem as a Status naming the place ("run.json:
// collectives[3]", "rank-2.jsonl: line 7"), the field and what to do. Pure; any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "genie/common/status.h"

namespace genie::record {

// genie's own files nest a handful of levels (configs inside provenance inside a results
// JSON); anything much deeper is not one of them.
inline constexpr int kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count),
// counting stops at limit + 1. Works on any text, valid JSON or not.
int JsonNestingDepth(std::string_view text, int limit = kMaxJsonDepth);

// Parses one JSON value. Errors (Corruption) name `where` and say what is wrong: nesting deeper
// than kMaxJsonDepth, or not JSON at all.
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& where);

// "an integer", "a string", ... of a JSON value's type, for messages ("found a string").
std::string DescribeJsonType(const nlohmann::json& value);

// Lenient reads for values already checked (or optional): the field when it holds the type
// asked for, the fallback otherwise — never throws, whatever `j` is (nlohmann's value() throws
// on a null or mistyped field).
bool HasField(const nlohmann::json& j, const char* key);
std::string StringField(const nlohmann::json& j, const char* key, const std::string& fallback = "");
int64_t IntField(const nlohmann::json& j, const char* key, int64_t fallback);
uint64_t UintField(const nlohmann::json& j, const char* key, uint64_t fallback);

// Reads the fields of one JSON object read from a file. Every accessor is a no-op once an error
// was found; status() is the first error, e.g.
//   run.json: collectives[3]: field "rank" should be an integer, found a string ("zero"); <remedy>
// A null field counts as absent. Integers must fit the target type; a whole-valued float such
// as 3.0 is accepted for an integer (files edited by other tools).
class FieldReader {
 public:
  // `remedy` ends every error: what the user can do (e.g. "regenerate it with genie results
  // merge"). `value` must outlive the reader.
  FieldReader(const nlohmann::json& value, std::string where, std::string remedy);

  bool is_object() const { return value_.is_object(); }

  // Required: absent is an error. Optional: absent keeps *out as it is.
  FieldReader& Required(const char* key, int* out);
  FieldReader& Required(const char* key, int64_t* out);
  FieldReader& Required(const char* key, std::string* out);
  FieldReader& Optional(const char* key, int* out);
  FieldReader& Optional(const char* key, int64_t* out);
  FieldReader& Optional(const char* key, uint64_t* out);
  FieldReader& Optional(const char* key, bool* out);
  FieldReader& Optional(const char* key, std::string* out);

  // The field if it is an array / object; nullptr when absent (an error if `required`) or of
  // another type (always an error).
  const nlohmann::json* Array(const char* key, bool required = false);
  const nlohmann::json* Object(const char* key, bool required = false);

  // An error about this object (e.g. a value out of range) in the same form.
  void Fail(const std::string& what);
  // An error about field `key` in the same form: field "key" <what>.
  void FailField(const char* key, const std::string& what);

  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  const std::string& where() const { return where_; }

 private:
  // The field, or nullptr when absent/null (and then an error if required).
  const nlohmann::json* Find(const char* key, bool required);
  template <typename T>
  FieldReader& Integer(const char* key, T* out, bool required);

  const nlohmann::json& value_;
  std::string where_;
  std::string remedy_;
  Status status_;
};

}  // namespace genie::record
