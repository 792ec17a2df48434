#include "tools/genie/huge_page_heap.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <spdlog/spdlog.h>

namespace genie::cli {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The kernel's THP mode, the bracketed word of /sys/kernel/mm/transparent_hugepage/enabled.
std::string ThpMode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

bool GlibcHasTunable() {
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 35);
}

}  // namespace

bool HugePageHeapRequested() {
  const std::string tunables = Env("GLIBC_TUNABLES");
  const size_t at = tunables.find(std::string(kTunable) + "=");
  if (at == std::string::npos) return false;
  const size_t value = at + std::string(kTunable).size() + 1;
  return value < tunables.size() && (tunables[value] == '1' || tunables[value] == '2');
}

void ReexecWithHugePageHeap(const std::vector<std::string>& argv) {
  const std::string old = Env("GLIBC_TUNABLES");
  if (argv.empty() || Env("GENIE_HUGE_PAGES") == "0" || old.find(kTunable) != std::string::npos ||
      !GlibcHasTunable() || ThpMode() != "madvise") {
    return;
  }
  const std::string tunables = (old.empty() ? "" : old + ":") + kTunable + "=1";
  if (setenv("GLIBC_TUNABLES", tunables.c_str(), 1) != 0) return;
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);
  execv("/proc/self/exe", args.data());
  // Not re-executed (no /proc, say): go on with the heap as it is.
  spdlog::debug("huge pages: could not re-execute /proc/self/exe; the heap stays on 4 KiB pages");
  if (old.empty()) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", old.c_str(), 1);
  }
}

}  // namespace genie::cli
