// TCP timeouts: how many retransmission timeouts (RTOs) the kernel's TCP counted so far in the
// calling process's network namespace (/proc/net/netstat, TcpExt TCPTimeouts) — on a testbed
// or a cluster, one rank's host. Each stalls a connection for tcp_rto_min (200 ms) or more, the
// way a queue that drops reaches a training step (docs/accuracy.md, the 256 KB queues). Real
// runs read it when an iteration starts and ends (RankSummary::tcp_timeouts), so a slow
// iteration is told apart by its own timeouts; ranks sharing a host read one counter, told
// apart by the namespace (RankSummary::netns). Reads of /proc; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace genie::record {

// From the text of a netstat file (pairs of "TcpExt: names..." / "TcpExt: values..." lines);
// nullopt when it has no TCPTimeouts.
std::optional<int64_t> ParseTcpTimeouts(const std::string& netstat);
// This namespace's, now; nullopt where /proc/net/netstat is missing or has no TCPTimeouts.
std::optional<int64_t> ReadTcpTimeouts();
// The calling process's network namespace (the inode of /proc/self/ns/net); 0 when unknown.
int64_t NetworkNamespaceId();

}  // namespace genie::record
