#include "genie/config/text_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace genie::config {

Result<std::string> ReadTextFile(const std::string& path, const char* what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(std::string(what) + " '" + path +
                                   "' is a directory; give the file itself");
  }
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
