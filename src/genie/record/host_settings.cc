#include "genie/record/host_settings.h"

#include <fstream>

namespace genie::record {

namespace {

// The first word of a sysctl file ("" when it cannot be read).
std::string ReadWord(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  in >> word;
  return word;
}

}  // namespace

nlohmann::json HostSettings::ToJson() const {
  return {{"host", host},
          {"tcp_congestion", tcp_congestion},
          {"tcp_congestion_source", tcp_congestion_source},
          {"tcp_congestion_default", tcp_congestion_default},
          {"tcp_ecn", tcp_ecn}};
}

HostSettings ReadHostSettings(const std::string& host, const std::string& socket_congestion,
                              const std::string& proc_sys) {
  HostSettings s;
  s.host = host;
  s.tcp_congestion_default = ReadWord(proc_sys + "/net/ipv4/tcp_congestion_control");
  s.tcp_ecn = ReadWord(proc_sys + "/net/ipv4/tcp_ecn");
  // A socket option the kernel refuses fails the run (net/socket_util.h), so once set it is
  // what every connection of the rank runs.
  if (!socket_congestion.empty()) {
    s.tcp_congestion = socket_congestion;
    s.tcp_congestion_source = kFromSocketOption;
  } else {
    s.tcp_congestion = s.tcp_congestion_default;
    s.tcp_congestion_source = kFromHostDefault;
  }
  return s;
}

}  // namespace genie::record
