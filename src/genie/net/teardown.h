// Teardown: the end of a transport, the parts every transport shares. Shutdown is the orderly
// end — each transport sends its goodbyes, then AwaitGoodbyes drives the loop until every peer
// answered, the timeout passed, or a peer failed meanwhile, and words the result the same way
// over TCP and libfabric. Abort is the failure end — each transport sends its reason, then
// DriveWhile lets the news out for as long as the transport says it is still leaving.
//
// Free functions over the transport's loop and completion queue (borrowed for the call).
// Threading: the loop thread only, outside any loop callback (they drive the loop).
#pragma once

#include <functional>
#include <string>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/loop/event_loop.h"
#include "genie/net/completion_queue.h"

namespace genie::net {

// Drives `loop` while `waiting()` and for at most `timeout`, stopping early when a peer fails
// (a fatal error reported meanwhile; one reported before does not stop it). Ok when nobody is
// waited for any more; Unavailable when a peer failed meanwhile (its error is in the log);
// Timeout naming `who()` (the peers whose goodbye is missing) otherwise.
Status AwaitGoodbyes(loop::EventLoop* loop, const CompletionQueue& completions, int rank,
                     TimeNs timeout, const std::function<bool()>& waiting,
                     const std::function<std::string()>& who);

// Drives `loop` while `more()` and until `until` (absolute), reading events as they come.
void DriveWhile(loop::EventLoop* loop, TimeNs until, const std::function<bool()>& more);

}  // namespace genie::net
