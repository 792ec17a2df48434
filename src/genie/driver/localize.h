// Localisation, the end of `genie run --localize`: while the network is still as the run left
// it (a fault that slowed the last iterations still in place), every pair of ranks that
// exchanged messages during the run measures, alone on its path, each direction (twice, the
// better kept) and its round trip: `genie doctor`'s pairwise probe (pair_probe.h) restricted
// to the links the workload used, so it costs seconds and needs no connection the run did not
// have. Each rank returns its row, which the run writes as its stream's "localize" record; the
// results merge builds the doctor's matrices from the rows (report/localization.h) and names
// the slow host and its side, or the slow pair, by the doctor's rules.
//
// Why a probe and not the run's own messages: a message's send completes once the socket
// buffer holds it, whatever the link does, and a receiver's first-to-last-byte time cannot
// tell the sender's transmit side from its own receive side when (as in a ring) each host
// sends to one peer and hears from another. Probing both directions of every used pair can.
//
// On a leaf-spine `genie testbed` pairs are probed one at a time (two pairs at once could share
// a spine link and read each other's traffic as a slow link), with rank 0 reading the switches'
// counters around each probe that crosses leaves: rank 0's record then also carries "paths",
// the switch links each direction crossed (pair_paths.h), from which the results name a slow
// leaf-spine link (report/path_blame.h). Elsewhere disjoint pairs are probed at once.
//
// Every rank calls it after its last iteration, on its loop thread, with nothing posted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"

namespace genie::driver {

struct LocalizeOptions {
  Bytes bytes = 1 << 20;     // per direction of each pair
  Bytes message = 256 << 10;
  int pings = 10;            // round trips per pair, before and after (the lower median kept)
  std::string host;          // this rank's host label (the testbed's h3, a hostname)
  std::string testbed;       // the `genie testbed` the run is on ("" = none), the same on every rank
};

// This rank's "localize" record: {"rank", "host", "peers": [{"peer", "rx_gbps" (measured
// here, from the peer), "rtt_us" (by the lower rank), "retrans" (fraction of the segments
// sent to the peer)}]}, one entry per peer it exchanged messages with; on rank 0 of a
// leaf-spine testbed also "paths": [{"from", "to", "crossings": [{"link", "from", "to",
// "share", "held"}]}] (ranks; switch nodes). Fails when the backend does (a peer gone).
Result<nlohmann::json> ProbeUsedLinks(real_backend::RealBackend& b, const LocalizeOptions& o);

}  // namespace genie::driver
