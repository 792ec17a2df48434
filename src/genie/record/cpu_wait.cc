#include "genie/record/cpu_wait.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace genie::record {

std::optional<ThreadCpuTimes> ParseSchedstat(const std::string& text) {
  long long run = -1, wait = -1;
  if (std::sscanf(text.c_str(), "%lld %lld", &run, &wait) != 2 || run < 0 || wait < 0) {
    return std::nullopt;
  }
  return ThreadCpuTimes{run, wait};
}

std::optional<ThreadCpuTimes> ReadThreadCpuTimes() {
  // Read once per iteration per rank: a plain read(2) into a stack buffer, no allocation.
  const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  return ParseSchedstat(buf);
}

}  // namespace genie::record
