// The commands that build, shape and remove a testbed (pure: a Layout in, argv lists out), so
// what `genie testbed up` does is testable without root and printable with --dry-run.
// control.h runs them.
#pragma once

#include <vector>

#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// Namespaces, bridges, veth pairs, addresses, routes, sysctls and tbf on both ends of every
// link, in an order that works: each command only needs what earlier ones made.
std::vector<Argv> UpCommands(const Layout& layout);

// The tbf on one end's egress: `rate_bps` with the link's burst and `queue_bytes` as limit.
// `replace` creates or changes it in place (tc qdisc replace keeps packets queued).
Argv ShapeCommand(const LinkEnd& end, uint64_t rate_bps, Bytes burst_bytes, Bytes queue_bytes);

// Removing a namespace removes its interfaces, qdiscs, routes and iptables rules with it.
std::vector<Argv> DownCommands(const Layout& layout);

}  // namespace genie::testbed
