// TestbedSpec: what a user asks `genie testbed up` for — a topology (star:H, or leafspine:LxSxH
// routed with ECMP over the spines), the default link rate, queue and MTU, NICs per host, and
// per-link overrides — from flags and/or a YAML file (docs/testbed.md). Pure data and parsing;
// layout.h turns it into namespaces, interfaces and addresses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"

namespace genie::testbed {

enum class TopologyKind { kStar, kLeafSpine };

// ECMP hash over the spines (net.ipv4.fib_multipath_hash_policy): l3 = addresses only (every
// flow between two hosts takes one spine), l4 = addresses and ports (flows spread).
enum class EcmpHash { kL3, kL4 };

// How a link end's egress shares its rate among the packets waiting for it: one FIFO (tbf); one
// FIFO per sending host served round-robin (htb), as a switch with virtual output queues
// arbitrates among its input ports; or, at a host's own NIC, small TCP packets (pure ACKs)
// before the bulk FIFO (htb), as a host's fq or fq_codel serves a sparse flow before the bulk
// ones. docs/testbed.md says what each does to TCP's shares.
enum class Scheduling { kFifo, kPerHost, kAckFirst };
// "fifo", "per-host", "ack-first"; ParseScheduling's error lists them.
const char* SchedulingName(Scheduling s);
Result<Scheduling> ParseScheduling(const std::string& text);

struct LinkOverride {
  std::string link;  // "h3" (host 3's NIC 0), "h3:1" (its NIC 1), "l0-s1" (leaf 0 to spine 1)
  std::optional<uint64_t> rate_bps;
  std::optional<Bytes> queue_bytes;
  std::optional<int> mtu;
};

struct TestbedSpec {
  std::string name = "genie";
  TopologyKind kind = TopologyKind::kStar;
  int hosts = 0;   // star: H; leafspine: L * H
  int leaves = 0;  // leafspine only
  int spines = 0;
  int hosts_per_leaf = 0;
  int nics = 1;  // per host; NIC k of every host is on rail k (its own bridge / subnet)
  uint64_t rate_bps = 1'000'000'000;
  // leafspine: the rate of every leaf-spine link (default: rate_bps); `links` still override.
  std::optional<uint64_t> spine_rate_bps;
  // leafspine: the queue of every leaf-spine link end (default: queue_bytes). A switch port's
  // buffer many times the path's bandwidth-delay product lets BBR flows sharing it settle on
  // unequal rates (docs/testbed.md, "TCP congestion control"); `links` override it.
  std::optional<Bytes> spine_queue_bytes;
  // leafspine: how every leaf-spine link end shares its rate (default: per host, so that TCP
  // flows crossing a spine get the equal shares a fabric is built to give, whatever their
  // congestion control makes of a deep FIFO).
  std::optional<Scheduling> spine_scheduling;
  // How each host's own NIC sends (fifo or ack-first; default ack-first): behind one FIFO the
  // ACKs a host owes its senders wait out its own outgoing data, which no host with fq does,
  // and the senders' windows stall for it (docs/testbed.md, "Shaping").
  std::optional<Scheduling> host_scheduling;
  Bytes queue_bytes = 0;  // 0: enough for TCP at the rate (layout.h)
  int mtu = 1500;
  EcmpHash hash = EcmpHash::kL4;
  // The hosts' TCP congestion control (net.ipv4.tcp_congestion_control in each host's
  // namespace); "" = what a new namespace inherits from this machine, which `up` then records
  // here. It moves measured steps by up to 15 % against the flow model (docs/testbed.md).
  std::string tcp_congestion;
  std::vector<LinkOverride> links;

  std::string TopologyText() const;  // "star:8", "leafspine:2x2x4"
};

// "star:8", "leafspine:2x2x4" into `spec` (kind and counts).
Status ParseTopology(const std::string& text, TestbedSpec* spec);
// Testbed and network names: 1-16 of [a-z0-9_], starting with a letter (they prefix namespace
// names, which must stay short and shell-safe).
Status CheckName(const std::string& name);
// A YAML description (docs/testbed.md) over `spec`; `origin` names the file in errors.
Status ParseSpecYaml(const std::string& text, const std::string& origin, TestbedSpec* spec);
Status LoadSpecFile(const std::string& path, TestbedSpec* spec);
// A congestion control's name as the kernel spells them (cubic, bbr, dctcp, ...).
Status CheckCongestionName(const std::string& name);
// Checks counts and ranges; errors say which key and what to use.
Status ValidateSpec(const TestbedSpec& spec);

// A link end's queue limit (tbf), the one rule for `testbed up` (--queue, --spine-queue, a
// link's queue) and `testbed fault --queue`: at least two full-size packets, at most what tc's
// 32-bit limit holds. `what` names the setting in the error.
inline constexpr Bytes kMinQueueBytes = 3000;
inline constexpr Bytes kMaxQueueBytes = 0xFFFFFFFFull;
Status CheckQueueLimit(Bytes queue_bytes, const std::string& what);

}  // namespace genie::testbed
