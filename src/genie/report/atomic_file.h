// Writing an output file (results JSON, Chrome trace, merged or stripped file) so that a reader
// sees the old file or the whole new one, never a 0-byte or half-written one: the text goes to
// a temporary file in the same folder (".NAME.tmp-PID-N"), is flushed to disk, and is renamed
// over NAME in one step. An interrupted write (kill, disk full) leaves NAME as it was; a killed
// process may leave its temporary file behind. Two writers of one NAME each rename a complete
// file, the last one wins. Any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "genie/common/status.h"

namespace genie::report {

// Errors (IoError) name `path` and say what to check.
Status WriteFileAtomically(const std::string& path, std::string_view content);

// The same for a file written piece by piece (a streamed results JSON or Chrome trace): Append
// buffers and writes to the temporary file; Commit flushes, syncs and renames it over `path`.
// Destroyed without a successful Commit, it removes the temporary file and leaves `path` alone.
class AtomicFileWriter {
 public:
  static Result<std::unique_ptr<AtomicFileWriter>> Open(const std::string& path);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  Status Append(std::string_view text);
  Status Commit();

 private:
  AtomicFileWriter(std::string path, std::string tmp, int fd)
      : path_(std::move(path)), tmp_(std::move(tmp)), fd_(fd) {}
  Status Flush();
  Status WriteAll(std::string_view text);
  Status Fail(const char* what);
  std::string path_, tmp_;
  int fd_;
  std::string buffer_;
};

}  // namespace genie::report
