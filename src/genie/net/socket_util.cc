#include "genie/net/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace genie::net {

Result<std::pair<std::string, int>> SplitHostPort(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return Status::InvalidArgument("bad address '" + text + "': expected [v6addr]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("bad address '" + text + "': expected host:port");
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535) {
    return Status::InvalidArgument("bad port in address '" + text + "'");
  }
  return std::make_pair(host, static_cast<int>(p));
}

Result<SocketAddress> ResolveAddress(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Status::InvalidArgument(
        fmt::format("cannot resolve '{}': {}", host, rc != 0 ? gai_strerror(rc) : "no result"));
  }
  SocketAddress a;
  std::memcpy(&a.storage, res->ai_addr, res->ai_addrlen);
  a.length = res->ai_addrlen;
  freeaddrinfo(res);
  return a;
}

std::string FormatAddress(const SocketAddress& addr) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (addr.family() == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(&addr.storage);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
    return fmt::format("{}:{}", buf, ntohs(in->sin_port));
  }
  if (addr.family() == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr.storage);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
    return fmt::format("[{}]:{}", buf, ntohs(in6->sin6_port));
  }
  return "?";
}

std::string SocketName(int fd, bool peer) {
  SocketAddress a;
  a.length = sizeof(a.storage);
  int rc = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length)
                : getsockname(fd, reinterpret_cast<sockaddr*>(&a.storage), &a.length);
  return rc == 0 ? FormatAddress(a) : "?";
}

Status SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::IoError(fmt::format("fcntl(O_NONBLOCK): {}", strerror(errno)));
  }
  return Status::Ok();
}

Status SetDataSocketOptions(int fd, const DataSocketOptions& o) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
    return Status::IoError(fmt::format("setsockopt(TCP_NODELAY): {}", strerror(errno)));
  }
  if (o.buffer_bytes > 0) {
    // The *FORCE variants (CAP_NET_ADMIN) pass net.core.{w,r}mem_max, whose Debian default
    // (208 KiB) is too small for a fast link; without the capability the kernel caps the
    // plain variants at that maximum — not an error.
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &o.buffer_bytes, sizeof(o.buffer_bytes)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o.buffer_bytes, sizeof(o.buffer_bytes));
    }
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &o.buffer_bytes, sizeof(o.buffer_bytes)) != 0) {
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &o.buffer_bytes, sizeof(o.buffer_bytes));
    }
  }
  if (o.user_timeout > 0) {
    unsigned int ms = static_cast<unsigned int>(o.user_timeout / kNsPerMs);
    if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)) != 0) {
      return Status::IoError(fmt::format("setsockopt(TCP_USER_TIMEOUT): {}", strerror(errno)));
    }
    // TCP_USER_TIMEOUT only fires with unacknowledged data in flight; a rank that merely waits
    // to receive would never notice a dead host. Keepalive probes close that gap: idle for a
    // third of the timeout, then probes; with TCP_USER_TIMEOUT set the kernel aborts once
    // probes have gone unanswered for the user timeout.
    int secs = static_cast<int>(std::max<TimeNs>(1, o.user_timeout / kNsPerSec / 3));
    int interval = std::max(1, secs / 2);
    int count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof(secs));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof(count));
  }
  if (!o.congestion.empty()) {
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, o.congestion.data(),
                   static_cast<socklen_t>(o.congestion.size())) != 0) {
      std::string available;
      std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
      std::getline(in, available);
      return Status::InvalidArgument(fmt::format(
          "TCP congestion control '{}' is not usable ({}); this kernel offers: {} (load another "
          "with `modprobe tcp_<name>` or pick one of these)",
          o.congestion, strerror(errno), available));
    }
  }
  return Status::Ok();
}

}  // namespace genie::net
