// A free TCP port for tests that listen (rendezvous stores, MASTER_PORT). Test-only; any thread
// may call.
#pragma once

namespace genie::testing {

// A TCP port that was free a moment ago, below the kernel's ephemeral range (so no parallel
// test's outgoing connection takes it first); 0 when none was found.
int FreeTcpPort();

}  // namespace genie::testing
