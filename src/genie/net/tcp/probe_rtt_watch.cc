#include "genie/net/tcp/probe_rtt_watch.h"

#include <linux/inet_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstring>

namespace genie::net {
namespace {
constexpr uint32_t kBbrUnit = 256;  // tcp_bbr's gains are fixed point, shifted 8 bits
}  // namespace

std::optional<bool> ProbeRttWatch::InProbeRtt(int fd) {
  char name[16] = {};
  socklen_t len = sizeof(name);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0 ||
      std::strncmp(name, "bbr", sizeof(name)) != 0) {
    return std::nullopt;
  }
  tcp_bbr_info info{};
  len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CC_INFO, &info, &len) != 0 || len < sizeof(info)) {
    return std::nullopt;
  }
  // A connection bbr has not yet measured (no bandwidth estimate) starts with unit gains too.
  const bool measured = info.bbr_bw_lo != 0 || info.bbr_bw_hi != 0;
  return measured && info.bbr_cwnd_gain == kBbrUnit && info.bbr_pacing_gain == kBbrUnit;
}

void ProbeRttWatch::Sample(int key, bool in_probe_rtt, TimeNs now) {
  auto it = since_.find(key);
  if (in_probe_rtt && it == since_.end()) {
    since_.emplace(key, now);
    ++closed_.episodes;
  } else if (!in_probe_rtt && it != since_.end()) {
    closed_.ns += now - it->second;
    since_.erase(it);
  }
}

void ProbeRttWatch::Forget(int key, TimeNs now) { Sample(key, false, now); }

ProbeRttTotals ProbeRttWatch::Totals(TimeNs now) const {
  ProbeRttTotals t = closed_;
  for (const auto& [key, since] : since_) t.ns += now - since;
  return t;
}

}  // namespace genie::net
