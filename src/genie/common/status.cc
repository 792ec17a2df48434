#include "genie/common/status.h"

namespace genie {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: name = "invalid argument"; break;
    case Code::kNotFound: name = "not found"; break;
    case Code::kIoError: name = "I/O error"; break;
    case Code::kCorruption: name = "corrupt input"; break;
    case Code::kUnsupported: name = "unsupported"; break;
    case Code::kTimeout: name = "timeout"; break;
    case Code::kUnavailable: name = "unavailable"; break;
    case Code::kInternal: name = "internal error"; break;
  }
  return std::string(name) + ": " + message_;
}

}  // namespace genie
