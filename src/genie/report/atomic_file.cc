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
  GENIE_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFileWriter> file, AtomicFileWriter::Open(path));
  GENIE_RETURN_IF_ERROR(file->Append(content));
  return file->Commit();
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Open(const std::string& path) {
  namespace fs = std::filesystem;
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  const fs::path tmp =
      target.parent_path() /
      fmt::format(".{}.tmp-{}-{}", target.filename().string(), getpid(), counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IoError(
        fmt::format("cannot write {}: creating {} ({}); check that the "
                    "folder exists, is writable and has space",
                    path, tmp.string(), std::strerror(errno)));
  }
  return std::unique_ptr<AtomicFileWriter>(new AtomicFileWriter(path, tmp.string(), fd));
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

Status AtomicFileWriter::Fail(const char* what) {
  const int err = errno;
  Status s =
      Status::IoError(fmt::format("cannot write {}: {} {} ({}); check that the folder "
                                  "exists, is writable and has space",
                                  path_, what, tmp_, std::strerror(err)));
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  return s;
}

Status AtomicFileWriter::Append(std::string_view text) {
  if (fd_ < 0) return Status::IoError("cannot write " + path_ + ": already closed");
  constexpr size_t kFlushAt = 1u << 20;
  if (buffer_.empty() && text.size() >= kFlushAt) return WriteAll(text);  // no copy of a big text
  buffer_.append(text);
  return buffer_.size() >= kFlushAt ? Flush() : Status::Ok();
}

Status AtomicFileWriter::Flush() {
  GENIE_RETURN_IF_ERROR(WriteAll(buffer_));
  buffer_.clear();
  return Status::Ok();
}

Status AtomicFileWriter::WriteAll(std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return Fail("writing");
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  if (fd_ < 0) return Status::IoError("cannot write " + path_ + ": already closed");
  GENIE_RETURN_IF_ERROR(Flush());
  // On disk before the rename, so that a crash of the machine cannot leave a renamed but empty
  // file (delayed allocation).
  if (::fsync(fd_) != 0 && errno != EINVAL) return Fail("flushing");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) return Fail("closing");
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    return Status::IoError(
        fmt::format("cannot write {}: renaming {} over it failed ({}); check "
                    "that {} is not a folder",
                    path_, tmp_, std::strerror(err), path_));
  }
  return Status::Ok();
}

}  // namespace genie::report
