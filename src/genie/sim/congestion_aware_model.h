// CongestionAwareModel: ASTRA-sim's congestion-aware analytical network, extended to every
// dimension. A message follows Topology::Route hop by hop (store and forward). Each
// unidirectional link is a FIFO serving one message at a time: a message that finds it free
// starts at once, arrives at the next device after floor(latency + bytes/bw) ns, and the link
// frees after floor(bytes/bw) ns, then serves the next waiting message. Arrival is scheduled
// before link-free, as in ASTRA-sim, which decides ties at equal times. A queued message starts
// at the whole ns the link frees, as in ASTRA-sim, unless messages may be cut into pieces
// (set_cut_messages): then it starts at the exact end of the one before (wire.h), so that many
// small pieces never cross a link faster than its bandwidth.
// ASTRA-sim's own congestion-aware backend accepts one dimension only; routing dimension by
// dimension is genie's extension (the same route ASTRA-sim's multi-dim topology code builds).
// Single-threaded.
#pragma once

#include <vector>

#include "genie/sim/network_model.h"
#include "genie/sim/wire.h"

namespace genie::sim {

class CongestionAwareModel final : public NetworkModel, private EventQueue::Handler {
 public:
  CongestionAwareModel(const Topology* topology, EventQueue* queue);
  NetworkModelKind kind() const override { return NetworkModelKind::kCongestionAware; }
  void Transmit(int src, int dst, Bytes bytes, uint64_t flow, uint16_t /*channel*/,
                std::function<void()> delivered) override;
  void TransmitTo(int src, int dst, Bytes bytes, uint64_t flow, uint16_t /*channel*/,
                  EventQueue::Handler* handler, uint64_t token) override;
  std::vector<LinkStats> link_stats() const override;
  void set_cut_messages(bool cut) override { cut_messages_ = cut; }

 private:
  struct Link {
    int head = -1;  // FIFO of waiting flights, linked through Flight::next (no allocation
    int tail = -1;  // per link: a 1,024-NPU FullyConnected dimension has a million links)
    bool busy = false;
    Wire wire;
    uint32_t waiting = 0;
    uint32_t max_waiting = 0;
    uint64_t messages = 0;
    Bytes bytes = 0;
    TimeNs busy_ns = 0;
    TimeNs queued_ns = 0;
  };
  struct Flight {
    std::vector<int> route;
    size_t hop = 0;
    int src = 0, dst = 0;  // npus, for errors
    Bytes bytes = 0;
    TimeNs enqueued_at = 0;
    int next = -1;
    EventQueue::Handler* handler = nullptr;  // delivery
    uint64_t token = 0;
  };
  // Events carry (index << 1) | kind: a flight's arrival at its hop's end, or a link freed.
  void OnEvent(uint64_t event) override;

  void Offer(int flight);  // hand the flight to the link of its current hop
  void Start(int flight);  // the link is free: serialize it now
  void Arrived(int flight);
  void Freed(int link);

  const Topology* topology_;
  EventQueue* queue_;
  std::vector<Link> links_;
  std::vector<Flight> flights_;
  std::vector<int> free_flights_;
  bool cut_messages_ = true;
};

}  // namespace genie::sim
