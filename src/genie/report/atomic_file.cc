#include "genie/report/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace genie::report {

Status WriteFileAtomically(const std::string& path, std::string_view content) {
  namespace fs = std::filesystem;
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  const fs::path tmp =
      target.parent_path() /
      fmt::format(".{}.tmp-{}-{}", target.filename().string(), getpid(), counter.fetch_add(1));
  auto fail = [&](const char* what) {
    const int err = errno;
    return Status::IoError(
        fmt::format("cannot write {}: {} {} ({}); check that the folder "
                    "exists, is writable and has space",
                    path, what, tmp.string(), std::strerror(err)));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail("creating");
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      Status s = fail("writing");
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  // On disk before the rename, so that a crash of the machine cannot leave a renamed but empty
  // file (delayed allocation).
  if (::fsync(fd) != 0 && errno != EINVAL) {
    Status s = fail("flushing");
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  if (::close(fd) != 0) {
    Status s = fail("closing");
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::IoError(
        fmt::format("cannot write {}: renaming {} over it failed ({}); check "
                    "that {} is not a folder",
                    path, tmp.string(), std::strerror(err), path));
  }
  return Status::Ok();
}

}  // namespace genie::report
