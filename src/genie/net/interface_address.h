// Interface selection: which local address a rank binds to, chosen the way NCCL_SOCKET_IFNAME
// chooses a NIC. A spec is a comma-separated list of entries; a rank uses entry
// (local_rank % entries), so ranks sharing a host can be spread over several NICs
// ("eth0,eth1": even local ranks on eth0, odd ones on eth1). Each entry is either
//  * an IPv4 or IPv6 address literal ("10.0.0.2", "fd00::2", "fe80::1%eth0"): used as is, or
//  * a network interface name ("eth0", "lo"): resolved with getifaddrs() to its first IPv4
//    address, else its first global IPv6 address, else its first link-local IPv6 address
//    (with its "%ifname" scope, without which it cannot be bound).
// An interface that does not exist or has no address is an error naming it and listing the
// interfaces this host has, with their addresses.
// Pure functions (they read the host's interface table); any thread.
#pragma once

#include <string>

#include "genie/common/status.h"

namespace genie::net {

// The address to bind for `spec` on the rank with this local rank (0-based, on its host).
Result<std::string> ResolveBindAddress(const std::string& spec, int local_rank);

// "lo 127.0.0.1 ::1, eth0 10.0.0.2 fe80::1%eth0": every interface of this host with its
// addresses, in getifaddrs() order; for error messages and logs.
std::string DescribeInterfaces();

// The error for binding `address` where the kernel said EADDRNOTAVAIL (it is not an address of
// this host): InvalidArgument — bad input, exit 2 — naming the rank and the address and listing
// this host's interfaces with their addresses, so that the user can pick one for `setting`
// (--bind, MASTER_ADDR).
Status AddressNotOnThisHost(int rank, const std::string& address, const std::string& what,
                            const std::string& setting = "--bind");
// Ok when a socket can bind `address` (port 0, released at once); AddressNotOnThisHost when
// it is not this host's; IoError otherwise. For code that hands the address to a library
// (libfabric) whose own error would not say so.
Status CheckBindable(int rank, const std::string& address, const std::string& what);

}  // namespace genie::net
