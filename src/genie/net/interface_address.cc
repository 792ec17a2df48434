#include "genie/net/interface_address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "genie/net/socket_util.h"

namespace genie::net {

namespace {

struct Interface {
  std::string name;
  std::vector<std::string> all;  // every address, in getifaddrs() order
  std::vector<std::string> v4, v6_global, v6_link_local;
};

std::string Numeric(const sockaddr* sa) {
  char host[NI_MAXHOST] = {};
  const socklen_t len = sa->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
  // glibc appends "%ifname" to a link-local IPv6 address: the form bind() needs.
  if (getnameinfo(sa, len, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) != 0) return "";
  return host;
}

Result<std::vector<Interface>> ListInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) {
    return Status::IoError(fmt::format("getifaddrs: {}", strerror(errno)));
  }
  std::vector<Interface> out;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_name == nullptr) continue;
    // Interfaces without any address still appear (AF_PACKET entries), so they can be named
    // in an error as existing but unusable.
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Interface& i) { return i.name == a->ifa_name; });
    if (it == out.end()) {
      out.push_back({a->ifa_name, {}, {}, {}, {}});
      it = out.end() - 1;
    }
    if (a->ifa_addr == nullptr) continue;
    const int family = a->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    std::string text = Numeric(a->ifa_addr);
    if (text.empty()) continue;
    it->all.push_back(text);
    if (family == AF_INET) {
      it->v4.push_back(text);
    } else if (IN6_IS_ADDR_LINKLOCAL(
                   &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr)) {
      it->v6_link_local.push_back(text);
    } else {
      it->v6_global.push_back(text);
    }
  }
  freeifaddrs(list);
  return out;
}

std::string Describe(const std::vector<Interface>& interfaces) {
  std::string s;
  for (const Interface& i : interfaces) {
    if (!s.empty()) s += ", ";
    s += i.name;
    if (i.all.empty()) s += " (no address)";
    for (const std::string& a : i.all) s += " " + a;
  }
  return s.empty() ? "(none)" : s;
}

// Strict literals only: inet_aton-style shorthands ("10", "127.1") would shadow interface
// names and are never what a user means here.
bool IsAddressLiteral(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1) return true;
  const size_t percent = s.find('%');  // IPv6 zone: "fe80::1%eth0"
  if (percent != std::string::npos && percent + 1 == s.size()) return false;
  return inet_pton(AF_INET6, s.substr(0, percent).c_str(), buf) == 1;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

std::string DescribeInterfaces() {
  auto interfaces = ListInterfaces();
  return interfaces.ok() ? Describe(*interfaces) : interfaces.status().message();
}

Result<std::string> ResolveBindAddress(const std::string& spec, int local_rank) {
  if (local_rank < 0) {
    return Status::InvalidArgument(fmt::format("local rank {} is negative", local_rank));
  }
  std::vector<std::string> entries;
  size_t start = 0;
  while (true) {
    const size_t comma = spec.find(',', start);
    entries.push_back(Trim(spec.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (entries.back().empty()) {
      return Status::InvalidArgument(fmt::format(
          "bind spec '{}' has an empty entry; expected addresses or interface names separated "
          "by commas, e.g. 'eth0' or 'eth0,eth1' or '10.0.0.2'",
          spec));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  const std::string& entry = entries[static_cast<size_t>(local_rank) % entries.size()];
  if (IsAddressLiteral(entry)) return entry;

  GENIE_ASSIGN_OR_RETURN(std::vector<Interface> interfaces, ListInterfaces());
  auto it = std::find_if(interfaces.begin(), interfaces.end(),
                         [&](const Interface& i) { return i.name == entry; });
  // With several entries, say which one this rank took.
  const std::string which =
      entries.size() > 1
          ? fmt::format("entry {} of bind spec '{}' for local rank {}",
                        local_rank % static_cast<int>(entries.size()) + 1, spec, local_rank)
          : "";
  if (it == interfaces.end()) {
    return Status::NotFound(fmt::format(
        "no network interface '{}' on this host ({}{}an entry that is not an IP address is "
        "taken as an interface name); this host has: {}",
        entry, which, which.empty() ? "" : "; ", Describe(interfaces)));
  }
  for (const auto* family : {&it->v4, &it->v6_global, &it->v6_link_local}) {
    if (!family->empty()) return family->front();
  }
  return Status::NotFound(
      fmt::format("network interface '{}'{} has no IPv4 or IPv6 address to bind; this host has: {}",
                  entry, which.empty() ? "" : " (" + which + ")", Describe(interfaces)));
}

Status AddressNotOnThisHost(int rank, const std::string& address, const std::string& what,
                            const std::string& setting) {
  return Status::InvalidArgument(fmt::format(
      "rank {}: cannot {} on {}: it is not an address of this host, whose interfaces are: {} "
      "(give {} one of these addresses{}; `ip -brief address` lists them too)",
      rank, what, address, DescribeInterfaces(), setting,
      setting == "--bind" ? " or an interface name" : ""));
}

Status CheckBindable(int rank, const std::string& address, const std::string& what) {
  GENIE_ASSIGN_OR_RETURN(SocketAddress addr, ResolveAddress(address, 0));
  const int fd = socket(addr.family(), SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(fmt::format("socket: {}", strerror(errno)));
  const int rc = bind(fd, addr.get(), addr.length);
  const int err = errno;
  close(fd);
  if (rc == 0) return Status::Ok();
  if (err == EADDRNOTAVAIL) return AddressNotOnThisHost(rank, address, what);
  return Status::IoError(
      fmt::format("rank {}: cannot {} on {}: {}", rank, what, address, strerror(err)));
}

}  // namespace genie::net
