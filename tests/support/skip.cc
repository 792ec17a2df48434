#include "tests/support/skip.h"

#include <unistd.h>

#include <cstdlib>

namespace genie::testing {

std::string Sanitized(const std::string& what) {
  return kSanitizedBuild ? what + " mean nothing under ASan" : "";
}

std::string RootMissing(const std::string& to) {
  return geteuid() == 0 ? "" : "needs root to " + to;
}

std::string NamespacesMissing() {
  std::string why = RootMissing("build a testbed (network namespaces)");
  if (why.empty() && std::system("ip netns list >/dev/null 2>&1") != 0) {
    why = "no network namespaces here";
  }
  return why;
}

std::string ToolMissing(const std::string& tool, const std::string& package) {
  const std::string probe = "command -v " + tool + " >/dev/null 2>&1";
  if (std::system(probe.c_str()) == 0) return "";
  return tool + " (Debian package " + package +
         ") is not installed; scripts/install-deps.sh installs it";
}

}  // namespace genie::testing
