// CompletionQueue: how a transport hands what finished to its TransportEvents sink — always
// from the loop, never from inside the Post* call or the socket handler that finished it
// (transport.h promises it), completions in the order they finished, then the fatal errors.
// The first fatal error is logged once and kept (a transport's Connect and Shutdown stop on it).
// Shared by the TCP and libfabric transports.
//
// Ownership: owned by its transport; borrows the loop (which must outlive it) and the sink.
// A drain still posted on the loop when the queue is destroyed does nothing.
// Threading: the loop thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "genie/common/status.h"
#include "genie/common/units.h"
#include "genie/loop/event_loop.h"
#include "genie/net/transport.h"

namespace genie::net {

struct Completion {
  enum Type { kSend, kRecv, kWrite, kRemoteWrite } type;
  int peer;
  uint16_t channel;
  uint64_t cookie;  // cookie, or region key for kRemoteWrite
  Bytes offset;     // kRemoteWrite: region offset; kRecv: the sender's remote_data
  Bytes bytes;
  uint32_t imm;
};

class CompletionQueue {
 public:
  explicit CompletionQueue(loop::EventLoop* loop) : loop_(loop) {}
  ~CompletionQueue() { *alive_ = false; }
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  void SetEvents(TransportEvents* events) { events_ = events; }
  void Complete(const Completion& done);
  // Logged at once if it is the first; delivered to OnFatal from the loop.
  void ReportFatal(Status status);
  bool fatal_seen() const { return first_fatal_seen_; }
  const Status& first_fatal() const { return first_fatal_; }

 private:
  void PostDrain();
  void Drain();

  loop::EventLoop* loop_;
  TransportEvents* events_ = nullptr;
  std::vector<Completion> done_, draining_;
  std::vector<Status> fatal_;
  bool drain_posted_ = false;
  bool first_fatal_seen_ = false;
  Status first_fatal_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace genie::net
