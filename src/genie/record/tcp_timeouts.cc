#include "genie/record/tcp_timeouts.h"

#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <sstream>

namespace genie::record {

std::optional<int64_t> ParseTcpTimeouts(const std::string& netstat) {
  std::istringstream in(netstat);
  std::string names, values;
  while (std::getline(in, names)) {
    if (names.rfind("TcpExt:", 0) != 0) continue;
    if (!std::getline(in, values) || values.rfind("TcpExt:", 0) != 0) return std::nullopt;
    std::istringstream n(names), v(values);
    std::string name, value;
    while (n >> name && v >> value) {
      if (name != "TCPTimeouts") continue;
      try {
        size_t used = 0;
        const long long t = std::stoll(value, &used);
        if (used != value.size() || t < 0) return std::nullopt;
        return static_cast<int64_t>(t);
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> ReadTcpTimeouts() {
  std::ifstream in("/proc/net/netstat");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return ParseTcpTimeouts(text.str());
}

int64_t HostId() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat st = {};
  const bool ns = stat("/proc/self/ns/net", &st) == 0;
  if (boot.empty() && !ns) return 0;
  const std::string key = boot + "/" + (ns ? std::to_string(st.st_ino) : "");
  return static_cast<int64_t>(std::hash<std::string>{}(key) & 0x7fffffffffffffffULL) | 1;
}

}  // namespace genie::record
