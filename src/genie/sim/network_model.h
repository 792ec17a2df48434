// NetworkModel: how long a message takes to cross the simulated network. One interface, two
// ASTRA-sim-compatible models (congestion_unaware_model.h, congestion_aware_model.h) and
// genie's flow-level model of a cut-through fabric with max-min fair links (flow_model.h). A model
// schedules delivery on the shared EventQueue; it knows bytes and endpoints, never payloads or
// tags (matching is SimBackend's job). Owned by SimBackend; single-threaded like its queue.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/units.h"
#include "genie/sim/event_queue.h"
#include "genie/sim/topology.h"

namespace genie::sim {

enum class NetworkModelKind { kCongestionUnaware, kCongestionAware, kFlow };
const char* NetworkModelName(NetworkModelKind kind);  // "unaware", "aware", "flow"
// Accepts "unaware", "aware", "flow", "congestion_unaware", "congestion-aware", ...
// (case-sensitive).
std::optional<NetworkModelKind> ParseNetworkModelKind(const std::string& text);

// Traffic one unidirectional link carried (congestion-aware and flow models).
struct LinkStats {
  int link = 0;
  uint64_t messages = 0;
  Bytes bytes = 0;
  TimeNs busy_ns = 0;      // sum of serialization times
  TimeNs queued_ns = 0;    // total time messages waited for the link to free up
  uint64_t max_queue = 0;  // most messages ever waiting behind the one in service
};

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  virtual NetworkModelKind kind() const = 0;
  // Starts moving `bytes` from npu `src` to npu `dst` now; `delivered` runs (as an event on
  // the queue, never inside this call) when the whole message has arrived at `dst`. Messages
  // with the same nonzero `flow` (and src, dst) are one stream of bytes: the unaware model
  // serializes them one after the other (0 = a flow of its own). `channel` names the connection
  // (src, dst, channel) that carries it on a real transport: the flow model sends a
  // connection's messages one at a time, in order, as a TCP socket does; ASTRA-sim's models
  // ignore it. When the delay does not fit in simulated time the model fails the queue with an
  // error naming the message.
  virtual void Transmit(int src, int dst, Bytes bytes, uint64_t flow, uint16_t channel,
                        std::function<void()> delivered) = 0;
  // The same without a closure: `handler->OnEvent(token)` runs on delivery, in the event in
  // which `delivered` would. The default wraps it in a closure of 16 bytes (no allocation) for
  // models that take closures only; the analytical models keep the pair in their own records.
  virtual void TransmitTo(int src, int dst, Bytes bytes, uint64_t flow, uint16_t channel,
                          EventQueue::Handler* handler, uint64_t token) {
    Transmit(src, dst, bytes, flow, channel, [handler, token] { handler->OnEvent(token); });
  }
  // Per-link counters for links that carried traffic (empty for the unaware model).
  virtual std::vector<LinkStats> link_stats() const { return {}; }
  // Whether messages may be pieces of larger ones (genie's --slice / --channels; the default).
  // The congestion-aware model then starts a message queued on a link at the exact end of the
  // one before, so that pieces never beat the link's bandwidth (wire.h); told that messages
  // are whole, as ASTRA-sim's always are, it starts it at the whole ns the link frees, as
  // ASTRA-sim does. Call before the first Transmit.
  virtual void set_cut_messages(bool /*cut*/) {}
  // Links behind a shaper (the flow model with network.yml `burst`): npu `npu`'s own links,
  // out of it and into it, have carried nothing since virtual time `since` (negative: before
  // the run), so their buckets hold what that time refilled, not more. Without a call a bucket
  // starts full (idle forever). Call before the first Transmit; other models ignore it.
  virtual void set_idle_since(int /*npu*/, double /*since*/) {}
  // Dimension `dim` is each host's loopback between its ranks (network.yml loopback_dimension,
  // sim/host_slots.h): on the flow model its links neither shape a path nor leave it unshaped,
  // so a message between ranks of two hosts is shaped by the hosts' links whichever slots it
  // joins. Call before the first Transmit; other models ignore it.
  virtual void set_loopback_dimension(int /*dim*/) {}
  // The hosts are one machine's namespaces, whose cores move `gbps` of loopback TCP in all
  // (network.yml machine_bandwidth): every message shares it (the flow model; its header says
  // how). Call before the first Transmit; other models ignore it.
  virtual void set_machine_bandwidth(double /*gbps*/) {}
  // The hosts' TCP runs bbr (network.yml probe_rtt): every connection, `interval_ns` after it
  // opened and then after each probe ended, spends `duration_ns` moving at most `gbps` (bbr's
  // PROBE_RTT; the flow model's header says how). Call before the first Transmit; other models
  // ignore it.
  virtual void set_probe_rtt(double /*interval_ns*/, double /*duration_ns*/, double /*gbps*/) {}
  // The connections npu `npu` sends on opened at virtual time `at` (negative: before the run;
  // default 0), which sets when their first PROBE_RTT is due. Call before the first
  // Transmit; models without set_probe_rtt ignore it.
  virtual void set_opened_at(int /*npu*/, double /*at*/) {}
};

std::unique_ptr<NetworkModel> MakeNetworkModel(NetworkModelKind kind, const Topology* topology,
                                               EventQueue* queue);

}  // namespace genie::sim
