#include "genie/sim/congestion_aware_model.h"

#include <algorithm>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::sim {

CongestionAwareModel::CongestionAwareModel(const Topology* topology, EventQueue* queue)
    : topology_(topology), queue_(queue), links_(topology->num_links()) {}

void CongestionAwareModel::Transmit(int src, int dst, Bytes bytes, uint64_t flow,
                                    uint16_t /*channel*/, std::function<void()> delivered) {
  auto [handler, token] = queue_->Hold(std::move(delivered));
  TransmitTo(src, dst, bytes, flow, 0, handler, token);
}

void CongestionAwareModel::TransmitTo(int src, int dst, Bytes bytes, uint64_t /*flow*/,
                                      uint16_t /*channel*/, EventQueue::Handler* handler,
                                      uint64_t token) {
  int f;
  if (free_flights_.empty()) {
    f = static_cast<int>(flights_.size());
    flights_.emplace_back();
  } else {
    f = free_flights_.back();
    free_flights_.pop_back();
  }
  Flight& flight = flights_[f];
  topology_->Route(src, dst, &flight.route);
  flight.hop = 0;
  flight.src = src;
  flight.dst = dst;
  flight.bytes = bytes;
  flight.next = -1;
  flight.handler = handler;
  flight.token = token;
  if (flight.route.empty()) {  // src == dst: nothing crosses the network
    queue_->After(0, this, static_cast<uint64_t>(f) << 1);
    return;
  }
  Offer(f);
}

void CongestionAwareModel::Offer(int f) {
  Flight& flight = flights_[f];
  Link& link = links_[flight.route[flight.hop]];
  if (!link.busy) {
    Start(f);
    return;
  }
  flight.enqueued_at = queue_->Now();
  flight.next = -1;
  if (link.tail < 0) {
    link.head = f;
  } else {
    flights_[link.tail].next = f;
  }
  link.tail = f;
  link.max_waiting = std::max(link.max_waiting, ++link.waiting);
}

void CongestionAwareModel::Start(int f) {
  Flight& flight = flights_[f];
  int id = flight.route[flight.hop];
  Link& link = links_[id];
  GENIE_CHECK(!link.busy) << "link " << id << " started while busy";
  const int dim = topology_->link_dim(id);
  const double serialization = static_cast<double>(flight.bytes) / topology_->bytes_per_ns(dim);
  const Wire::Times t = link.wire.Serialize(queue_->Now(), topology_->latency_ns(dim),
                                            serialization, /*carry_fraction=*/cut_messages_);
  if (!queue_->Fits(t.arrival_delay)) {  // arrival_delay >= free_delay
    queue_->Fail(topology_->OverflowError(flight.src, flight.dst, flight.bytes, dim));
    return;
  }
  link.wire.Put(t);
  link.busy = true;
  ++link.messages;
  link.bytes = SaturatingAdd(link.bytes, flight.bytes);
  link.busy_ns = SaturatingAdd(link.busy_ns, t.free_delay);
  queue_->After(t.arrival_delay, this, static_cast<uint64_t>(f) << 1);
  queue_->After(t.free_delay, this, (static_cast<uint64_t>(id) << 1) | 1);
}

void CongestionAwareModel::Arrived(int f) {
  Flight& flight = flights_[f];
  if (!flight.route.empty()) ++flight.hop;
  if (flight.hop < flight.route.size()) {
    Offer(f);
    return;
  }
  EventQueue::Handler* handler = flight.handler;
  const uint64_t token = flight.token;
  free_flights_.push_back(f);
  handler->OnEvent(token);
}

void CongestionAwareModel::OnEvent(uint64_t event) {
  if ((event & 1) != 0) {
    Freed(static_cast<int>(event >> 1));
  } else {
    Arrived(static_cast<int>(event >> 1));
  }
}

void CongestionAwareModel::Freed(int id) {
  Link& link = links_[id];
  link.busy = false;
  if (link.head < 0) return;
  int f = link.head;
  link.head = flights_[f].next;
  if (link.head < 0) link.tail = -1;
  --link.waiting;
  link.queued_ns = SaturatingAdd(link.queued_ns, queue_->Now() - flights_[f].enqueued_at);
  Start(f);
}

std::vector<LinkStats> CongestionAwareModel::link_stats() const {
  std::vector<LinkStats> out;
  for (int i = 0; i < static_cast<int>(links_.size()); ++i) {
    const Link& l = links_[i];
    if (l.messages == 0) continue;
    out.push_back(LinkStats{i, l.messages, l.bytes, l.busy_ns, l.queued_ns, l.max_waiting});
  }
  return out;
}

}  // namespace genie::sim
