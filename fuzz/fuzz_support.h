// Shared by the libFuzzer targets in fuzz/ (linked into each): UBSan set to stop at the first
// report, so that undefined behaviour counts as a crash the fuzzer keeps; genie's log silenced,
// so that warnings about damaged input do not flood the run; and MemFile, an in-memory file for
// readers that only take a path. Single-threaded: libFuzzer calls a target from one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace genie::fuzz {

// A file with the given bytes that lives in memory (memfd) until destroyed; path() opens it
// like any file ("/proc/self/fd/N").
class MemFile {
 public:
  MemFile(const uint8_t* data, size_t size);
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace genie::fuzz
