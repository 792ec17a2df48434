// Host settings: what the host a rank runs on does with a queue — the TCP congestion control in
// effect on the rank's connections (the TCP_CONGESTION socket option genie set with
// --tcp-congestion, else the host's default net.ipv4.tcp_congestion_control) and ECN
// (net.ipv4.tcp_ecn) — read from /proc/sys as this process sees it: inside a testbed host's
// network namespace, that namespace's values. Each rank writes its reading into its stream's
// header ("host_settings"); report/network_settings.h gathers them per host into results.json.
// Reads files; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace genie::record {

// Where the congestion control in effect came from.
inline constexpr const char* kFromSocketOption = "socket option";
inline constexpr const char* kFromHostDefault = "host default";

struct HostSettings {
  std::string host;                    // the rank's host label (h3, or the hostname)
  std::string tcp_congestion;          // in effect on genie's connections ("" unknown)
  std::string tcp_congestion_source;   // kFromSocketOption or kFromHostDefault
  std::string tcp_congestion_default;  // net.ipv4.tcp_congestion_control ("" unreadable)
  std::string tcp_ecn;                 // net.ipv4.tcp_ecn: 0 off, 1 request, 2 accept only
  nlohmann::json ToJson() const;
};

// `socket_congestion`: the algorithm genie sets on its sockets ("" = none: the host's default
// is in effect). `proc_sys`: the sysctl tree to read (tests point it at a folder of files).
HostSettings ReadHostSettings(const std::string& host, const std::string& socket_congestion,
                              const std::string& proc_sys = "/proc/sys");

}  // namespace genie::record
