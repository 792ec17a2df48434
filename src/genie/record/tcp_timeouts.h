// TCP timeouts: how many retransmission timeouts (RTOs) the kernel's TCP counted so far in the
// calling process's network namespace (/proc/net/netstat, TcpExt TCPTimeouts) — on a testbed
// or a cluster, one rank's host. Each stalls a connection for tcp_rto_min (200 ms) or more, the
// way a queue that drops reaches a training step (docs/accuracy.md, the 256 KB queues). Real
// runs read it before the first iteration and as each ends (RankSummary::tcp_timeouts); ranks
// sharing a host read one counter, told apart by HostId (RankSummary::host_id). The counter is
// the host's: other jobs' connections on it count too. Reads of /proc; any thread.
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
// The host whose counter that is: the machine (its boot id) and the network namespace (the
// inode of /proc/self/ns/net), hashed to a positive number; 0 when neither can be read.
int64_t HostId();

}  // namespace genie::record
