// Status and Result<T>: how genie reports recoverable errors at every I/O, parsing and
// configuration boundary (LevelDB style, named constructors). Messages are written for the user:
// they name the file, rank, node id or peer and say what to do. Value types; any thread.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "genie/common/check.h"

namespace genie {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kIoError, kCorruption, kUnsupported,
                    kTimeout, kUnavailable, kInternal };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Unsupported(std::string m) { return {Code::kUnsupported, std::move(m)}; }
  static Status Timeout(std::string m) { return {Code::kTimeout, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

  // Prefixes context ("reading foo.3.et: ") so errors read outermost-first.
  Status WithContext(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }
  // Appends lines of detail (e.g. what a rank was waiting on) after the message.
  Status WithDetail(const std::string& detail) const {
    return ok() ? *this : Status(code_, message_ + "\n" + detail);
  }

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// Result<T> holds a T or a non-OK Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    GENIE_CHECK(!std::get<Status>(v_).ok()) << "Result built from an OK Status";
  }
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { GENIE_CHECK(ok()) << status().ToString(); return std::get<T>(v_); }
  const T& value() const& { GENIE_CHECK(ok()) << status().ToString(); return std::get<T>(v_); }
  T&& value() && { GENIE_CHECK(ok()) << status().ToString(); return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace genie

#define GENIE_CONCAT_INNER(a, b) a##b
#define GENIE_CONCAT(a, b) GENIE_CONCAT_INNER(a, b)

// Returns early from a function returning Status or Result<U> when `expr` is not OK.
#define GENIE_RETURN_IF_ERROR(expr)                  \
  do {                                               \
    ::genie::Status genie_status_ = (expr);          \
    if (!genie_status_.ok()) return genie_status_;   \
  } while (0)

// GENIE_ASSIGN_OR_RETURN(auto x, MaybeX()); declares x from a Result or returns its Status.
#define GENIE_ASSIGN_OR_RETURN(lhs, rexpr) \
  GENIE_ASSIGN_OR_RETURN_IMPL(GENIE_CONCAT(genie_result_, __LINE__), lhs, rexpr)
#define GENIE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
