#include "genie/net/tcp/probe_rtt_watch.h"

#include <linux/inet_diag.h>
#include <netinet/in.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>

namespace genie::net {
namespace {
constexpr uint32_t kBbrUnit = 256;  // tcp_bbr's gains are fixed point, shifted 8 bits
}  // namespace

std::optional<bool> ProbeRttWatch::InProbeRtt(int fd) {
  // Another congestion control answers less: vegas and dctcp 16 bytes, the others none.
  tcp_bbr_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_CC_INFO, &info, &len) != 0 || len < sizeof(info)) {
    return std::nullopt;
  }
  // A connection bbr has not yet measured (no bandwidth estimate) starts with unit gains too.
  const bool measured = info.bbr_bw_lo != 0 || info.bbr_bw_hi != 0;
  return measured && info.bbr_cwnd_gain == kBbrUnit && info.bbr_pacing_gain == kBbrUnit;
}

int64_t ProbeRttWatch::Backlog(int fd) {
  int bytes = 0;
  return ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : 0;
}

void ProbeRttWatch::Sample(int key, bool in_probe_rtt, int64_t backlog, TimeNs now) {
  auto it = open_.find(key);
  if (in_probe_rtt) {
    if (it == open_.end()) it = open_.emplace(key, Episode{now, false}).first;
    if (!it->second.busy && backlog > kBacklogBytes) {
      it->second.busy = true;
      ++closed_.episodes;
      closed_.last_begin = std::max(closed_.last_begin, it->second.since);
    }
  } else if (it != open_.end()) {
    if (it->second.busy) closed_.ns += now - it->second.since;
    open_.erase(it);
  }
}

void ProbeRttWatch::Forget(int key, TimeNs now) { Sample(key, false, 0, now); }

ProbeRttTotals ProbeRttWatch::Totals(TimeNs now) const {
  ProbeRttTotals t = closed_;
  for (const auto& [key, e] : open_) {
    if (e.busy) t.ns += now - e.since;
  }
  return t;
}

}  // namespace genie::net
