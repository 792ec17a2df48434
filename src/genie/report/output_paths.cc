#include "genie/report/output_paths.h"

#include <fmt/format.h>

#include <filesystem>

namespace genie::report {

namespace {

namespace fs = std::filesystem;

// The same file: by identity when both exist, by their absolute normalised paths otherwise.
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    bool same = fs::equivalent(a, b, ec);
    if (!ec) return same;
  }
  fs::path pa = fs::weakly_canonical(fs::absolute(a, ec), ec);
  fs::path pb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return pa.lexically_normal() == pb.lexically_normal();
}

}  // namespace

Status CheckOutputsAreNotInputs(const std::vector<std::string>& outputs,
                                const std::vector<std::string>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const std::string& in : inputs) {
      if (SameFile(outputs[i], in)) {
        return Status::InvalidArgument(fmt::format(
            "refusing to write {}: it is one of the inputs ({}) and would be overwritten; "
            "name another output file",
            outputs[i], in));
      }
    }
    for (size_t k = 0; k < i; ++k) {
      if (SameFile(outputs[i], outputs[k])) {
        return Status::InvalidArgument(fmt::format(
            "refusing to write {} twice (two outputs name it: {} and {}); name distinct output "
            "files",
            outputs[i], outputs[k], outputs[i]));
      }
    }
  }
  return Status::Ok();
}

}  // namespace genie::report
