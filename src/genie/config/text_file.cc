#include "genie/config/text_file.h"

#include "genie/common/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace genie::config {

Result<std::string> ReadTextFile(const std::string& path, const char* what) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(std::string("cannot open ") + what + " '" + path +
                            "': " + std::strerror(errno) + " (check the path)");
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IoError(std::string("error reading ") + what + " '" + path + "'");
  return out.str();
}

}  // namespace genie::config
