// Socket helpers shared by the TCP transport and the rendezvous: "host:port" parsing and
// resolution, address formatting, and the socket options genie sets on every data connection.
// Pure functions over file descriptors the caller owns; any thread.
#pragma once

#include <sys/socket.h>

#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::net {

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const { return storage.ss_family; }
};

// "127.0.0.1:5000", "[::1]:5000", "host:5000" -> host and port.
Result<std::pair<std::string, int>> SplitHostPort(const std::string& text);
// Resolves a numeric or named host (first result). port may be 0.
Result<SocketAddress> ResolveAddress(const std::string& host, int port);
// "127.0.0.1:5000" / "[::1]:5000".
std::string FormatAddress(const SocketAddress& addr);
// Address and port the socket is bound to, or connected to (peer == true).
std::string SocketName(int fd, bool peer);

struct DataSocketOptions {
  int buffer_bytes = 4 << 20;  // SO_SNDBUF and SO_RCVBUF; 0 = leave to the kernel's autotuning
  TimeNs user_timeout = 30 * kNsPerSec;  // TCP_USER_TIMEOUT; 0 = kernel default
  std::string congestion;      // TCP_CONGESTION by name; empty = system default
};

// TCP_NODELAY, buffers, TCP_USER_TIMEOUT plus keepalive probes (so an idle connection to a
// dead host fails within about the timeout too), TCP_CONGESTION. The error names what failed and,
// for congestion control, lists the algorithms the kernel offers.
Status SetDataSocketOptions(int fd, const DataSocketOptions& options);
Status SetNonBlocking(int fd);

}  // namespace genie::net
