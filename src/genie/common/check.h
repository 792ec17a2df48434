// GENIE_CHECK(cond) << "context": aborts with file:line and the message when an internal
// invariant is broken. For programmer errors only; user input errors are a Status.
#pragma once

#include <sstream>

namespace genie::internal {

class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets the macro be a single expression usable without braces.
struct Voidify {
  void operator&(CheckFailure&) {}
};

}  // namespace genie::internal

#define GENIE_CHECK(cond)                 \
  (cond) ? (void)0                        \
         : ::genie::internal::Voidify() & \
               ::genie::internal::CheckFailure(__FILE__, __LINE__, #cond)

#define GENIE_CHECK_EQ(a, b) GENIE_CHECK((a) == (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "
#define GENIE_CHECK_LT(a, b) GENIE_CHECK((a) < (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "
#define GENIE_CHECK_LE(a, b) GENIE_CHECK((a) <= (b)) << #a " = " << (a) << ", " #b " = " << (b) << " "
