// Netcheck: `genie netcheck`, the smallest end-to-end check that a launch, a rendezvous and the
// network work. Every rank exchanges verified messages (each word a function of sender,
// receiver, iteration and index) with every other over the real transport, counts the words
// that arrive wrong, and prints one line: iterations, peers, size, wrong words, connections per
// peer, GB/s sent (genie launch -n 4 -- netcheck --channels 4).
//
// Threading: the process's main thread (one rank per process).
#pragma once

#include <string>

#include "genie/common/units.h"
#include "genie/real_backend/real_backend.h"

namespace genie::driver {

struct NetcheckOptions {
  Bytes bytes = 1 << 20;  // per peer per iteration (rounded down to whole 4-byte words)
  int iters = 10;
  int channels = 1;                 // connections per peer pair
  std::string bind = "127.0.0.1";   // address or interface; a comma list by local rank
  std::string tcp_congestion;       // "" = the system's
  TimeNs peer_timeout = 30'000'000'000;
  real_backend::TransportChoice transport;
};

// This rank's part (rank, world and rendezvous from genie launch's environment). Prints its
// line on stdout and any error on stderr naming the rank; returns the exit code: 0 when every
// word arrived right, 1 when some did not (or the end failed), launch's kExitBadInput for bad
// input and kExitPeerFailed when a peer went away.
int RunNetcheck(const NetcheckOptions& options);

}  // namespace genie::driver
