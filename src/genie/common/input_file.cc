#include "genie/common/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace genie {

Status CheckInputFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      return Status::NotFound(path + ": the " + what +
                              " is a dangling symbolic link; point it at the file");
    }
    return Status::NotFound(path + ": cannot read the " + what + ": " + std::strerror(err));
  }
  const char* is = nullptr;
  if (S_ISDIR(st.st_mode)) {
    is = "a folder";
  } else if (S_ISFIFO(st.st_mode)) {
    is = "a FIFO (reading it would wait for a writer)";
  } else if (!S_ISREG(st.st_mode)) {
    is = "not a regular file (a socket or device)";
  } else if (::access(path.c_str(), R_OK) != 0) {
    is = "not readable (permissions)";
  }
  if (is == nullptr) return Status::Ok();
  return Status::InvalidArgument(path + ": the " + what + " is " + is + "; give the file itself");
}

}  // namespace genie

namespace genie {

Result<std::string> ReadInputFile(const std::string& path, const std::string& what) {
  GENIE_RETURN_IF_ERROR(CheckInputFile(path, what));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound("cannot open " + what + " '" + path + "': " + std::strerror(errno) +
                            " (check the path)");
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IoError("error reading " + what + " '" + path + "'");
  return out.str();
}

}  // namespace genie
