// Backend: the only thing the Executor and CollectiveRunner see of time and the network.
// RealBackend = event loop (epoll + timerfd, precise sleep) + a Transport; SimBackend = a
// virtual clock + a modelled network. Because the executor cannot tell them apart, a real run
// and its prediction execute the very same issue rules and schedules.
//
// Threading: a Backend belongs to one rank's event loop; every method, and every callback it
// invokes, runs on that loop's thread. Callbacks never run re-entrantly from inside the call
// that scheduled them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "genie/common/event_handler.h"
#include "genie/common/units.h"

namespace genie::runtime {

// One point-to-point message. Matched with its counterpart by (src, dst, tag).
struct Message {
  int peer = -1;          // destination for Send, source for Recv (global rank)
  uint64_t tag = 0;
  Bytes bytes = 0;
  uint16_t channel = 0;   // which parallel flow to the peer carries it
  const void* data = nullptr;  // Send: payload (nullptr = no real data; the wire carries filler)
  void* into = nullptr;        // Recv: where the payload lands (nullptr = discard)
  // Simulation only: messages to the same peer with the same nonzero `flow` are one stream
  // of bytes that even the congestion-unaware model serializes (the CollectiveRunner gives
  // each chunk of a collective its own flow; 0 = a flow of its own). Real backends ignore it.
  uint64_t flow = 0;
};

using Callback = std::function<void()>;
class ScheduleCache;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Current time in ns: virtual for simulation, monotonic wall time for real runs.
  virtual TimeNs Now() const = 0;
  // Calls `fn` once `delay` ns have passed (a compute op, a modelled local cost).
  virtual void After(TimeNs delay, Callback fn) = 0;
  // Posts a send; `done` runs once the payload's buffer may be reused: on a real transport when
  // the data is handed to the kernel, in simulation when it is delivered (ASTRA-sim's rule).
  virtual void Send(const Message& msg, Callback done) = 0;
  // Posts a receive; `done` runs when the matching message has fully arrived.
  virtual void Recv(const Message& msg, Callback done) = 0;
  // True when the backend models time (simulation): local costs such as endpoint delay and
  // reduction time are charged by the model; on a real backend the CPU pays them for real.
  virtual bool modelled() const = 0;
  // The same three with a (handler, arg) pair in place of the callback: handler->OnEvent(arg)
  // runs where the callback would. The defaults wrap the pair in a closure (16 bytes, kept in
  // std::function's own storage); SimBackend passes the pair along without one.
  virtual void AfterEvent(TimeNs delay, EventHandler* handler, uint64_t arg) {
    After(delay, [handler, arg] { handler->OnEvent(arg); });
  }
  virtual void SendEvent(const Message& msg, EventHandler* handler, uint64_t arg) {
    Send(msg, [handler, arg] { handler->OnEvent(arg); });
  }
  virtual void RecvEvent(const Message& msg, EventHandler* handler, uint64_t arg) {
    Recv(msg, [handler, arg] { handler->OnEvent(arg); });
  }
  // SendEvent(msg, handler, arg) after `first`, then `then` more ns, each a delay of its own
  // (an event when > 0, at once when 0): the same events in the same order as AfterEvent(first,
  // h, a) whose event calls AfterEvent(then, h, b) whose event calls SendEvent, but nothing is
  // called back in between. A modelled local cost (a reduction, an endpoint-delay) then costs
  // the simulator no visit to the sender's state (SimBackend keeps the message meanwhile).
  virtual void SendEventAfter(TimeNs first, TimeNs then, const Message& msg, EventHandler* handler,
                              uint64_t arg) {
    if (first > 0) {
      After(first, [this, then, msg, handler, arg] { SendEventAfter(0, then, msg, handler, arg); });
    } else if (then > 0) {
      After(then, [this, msg, handler, arg] { SendEvent(msg, handler, arg); });
    } else {
      SendEvent(msg, handler, arg);
    }
  }
  // Where ranks in one process share equal (rotated) chunk schedules; null: nothing shared.
  virtual ScheduleCache* schedule_cache() { return nullptr; }
};

}  // namespace genie::runtime
