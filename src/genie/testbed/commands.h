// The commands that build, shape and remove a testbed (pure: a Layout in, argv lists out), so
// what `genie testbed up` does is testable without root and printable with --dry-run.
// control.h runs them.
#pragma once

#include <vector>

#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// Namespaces, bridges, veth pairs, addresses, routes, sysctls and the shaping of both ends of
// every link, in an order that works: each command only needs what earlier ones made.
std::vector<Argv> UpCommands(const Layout& layout);

// Shaping one end's egress to `rate_bps` with `burst_bytes` of bucket and `queue_bytes` of queue.
// The end's scheduling (Link::SchedulingOf) picks the qdiscs:
//   fifo      one tbf;
//   per-host  an htb whose root class holds the rate, with one child class per host that can
//             send through the end (Layout::HostsSendingThrough), each guaranteed an equal part,
//             allowed the whole and queueing in its own bfifo of `queue_bytes`; u32 filters on
//             the source address pick the class, anything else (ARP) takes a last class;
//   ack-first one tbf holding the rate, and inside it an htb that only orders: a first-served
//             class (prio 0) for TCP packets under 128 bytes (pure ACKs, picked by a u32
//             filter on the IP length) and one for the rest, each with a bfifo of `queue_bytes`.
// `build` adds what only exists once (the roots' handles, the htb classes that never change and
// the filters); without it, the commands change rate and queue in place. Every command is a
// `replace`, so packets stay queued.
enum class ShapeStep { kBuild, kChange };
std::vector<Argv> ShapeCommands(const Layout& layout, const Link& link, const LinkEnd& end,
                                uint64_t rate_bps, Bytes burst_bytes, Bytes queue_bytes,
                                ShapeStep step);

// Removing a namespace removes its interfaces, qdiscs, routes and iptables rules with it.
std::vector<Argv> DownCommands(const Layout& layout);

}  // namespace genie::testbed
