#include "genie/common/check.h"

#include <cstdio>
#include <cstdlib>

namespace genie::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* cond) {
  stream_ << file << ":" << line << ": check failed: " << cond << " ";
}

CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "genie: internal error (please report): %s\n", stream_.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace genie::internal
