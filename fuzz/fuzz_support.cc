#include "fuzz_support.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

// UBSan's reports are recoverable by default: they print and go on, and libFuzzer would not
// keep the input. Halting makes every report a crash with a reproducer.
extern "C" const char* __ubsan_default_options() { return "halt_on_error=1:print_stacktrace=1"; }

namespace genie::fuzz {
namespace {

// Damaged input is the norm here; genie's warnings about it would be most of the run's output.
const bool kQuiet = [] {
  spdlog::set_level(spdlog::level::off);
  return true;
}();

}  // namespace

MemFile::MemFile(const uint8_t* data, size_t size) {
  fd_ = memfd_create("genie_fuzz", MFD_CLOEXEC);
  if (fd_ < 0) return;
  size_t done = 0;
  while (done < size) {
    const ssize_t w = write(fd_, data + done, size - done);
    if (w <= 0) {
      close(fd_);
      fd_ = -1;
      return;
    }
    done += static_cast<size_t>(w);
  }
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace genie::fuzz
