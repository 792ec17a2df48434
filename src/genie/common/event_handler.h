// EventHandler: receives an event as (handler, 64-bit argument) instead of a closure. The
// simulator runs millions of events per second; a pair needs no closure to build, move, store
// or destroy, and an event record stays 16 bytes (sim/event_queue.h). The owner encodes what
// the event means in `arg` (a step index, a link, a slot). A handler must outlive the events
// scheduled for it. Called on the thread that runs the events.
#pragma once

#include <cstdint>

namespace genie {

class EventHandler {
 public:
  virtual void OnEvent(uint64_t arg) = 0;

 protected:
  ~EventHandler() = default;
};

}  // namespace genie
