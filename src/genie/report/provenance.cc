#include "genie/report/provenance.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#ifndef GENIE_VERSION
#define GENIE_VERSION "unknown"
#endif

namespace genie::report {

const std::vector<std::string>& RecordedSysctls() {
  static const std::vector<std::string> kSysctls = {
      "net/ipv4/tcp_congestion_control", "net/ipv4/tcp_available_congestion_control",
      "net/ipv4/tcp_rmem",               "net/ipv4/tcp_wmem",
      "net/ipv4/tcp_mem",                "net/ipv4/tcp_window_scaling",
      "net/ipv4/tcp_timestamps",         "net/ipv4/tcp_sack",
      "net/ipv4/tcp_ecn",                "net/ipv4/tcp_mtu_probing",
      "net/ipv4/tcp_slow_start_after_idle", "net/ipv4/tcp_no_metrics_save",
      "net/ipv4/tcp_notsent_lowat",      "net/core/rmem_max",
      "net/core/wmem_max",               "net/core/rmem_default",
      "net/core/wmem_default",           "net/core/netdev_max_backlog",
      "net/core/default_qdisc",
  };
  return kSysctls;
}

namespace {

bool ReadTrimmed(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  // /proc uses tabs between tcp_rmem's three numbers; one space reads better and compares equal.
  for (char& c : s) {
    if (c == '\t') c = ' ';
  }
  *out = s;
  return true;
}

}  // namespace

nlohmann::json Provenance(const nlohmann::json& configs, const nlohmann::json& transport,
                          const std::vector<std::string>& argv) {
  nlohmann::json p;
  p["genie_version"] = GENIE_VERSION;
  p["command_line"] = argv;
  p["configs"] = configs;
  p["transport"] = transport;

  struct utsname u {};
  if (uname(&u) == 0) {
    p["kernel"] = {{"sysname", u.sysname},
                   {"release", u.release},
                   {"version", u.version},
                   {"machine", u.machine}};
  }
  nlohmann::json sysctls = nlohmann::json::object();
  for (const std::string& name : RecordedSysctls()) {
    std::string value;
    if (ReadTrimmed("/proc/sys/" + name, &value)) {
      std::string key = name;
      for (char& c : key) {
        if (c == '/') c = '.';
      }
      sysctls[key] = value;
    }
  }
  p["sysctls"] = std::move(sysctls);

  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) p["hostname"] = host;
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  p["time"] = buf;
  return p;
}

}  // namespace genie::report
