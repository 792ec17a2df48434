#include "genie/sim/congestion_unaware_model.h"

#include <algorithm>
#include <bit>

namespace genie::sim {

void CongestionUnawareModel::Transmit(int src, int dst, Bytes bytes, uint64_t flow,
                                      uint16_t /*channel*/, std::function<void()> delivered) {
  auto [handler, token] = queue_->Hold(std::move(delivered));
  TransmitTo(src, dst, bytes, flow, 0, handler, token);
}

void CongestionUnawareModel::TransmitTo(int src, int dst, Bytes bytes, uint64_t flow,
                                        uint16_t /*channel*/, EventQueue::Handler* handler,
                                        uint64_t token) {
  // A flow's messages (src != dst: a message to oneself never crosses a dimension).
  const uint32_t index = flow != 0 && src != dst ? FlowFor(FlowKey{src, dst, flow}) : kEmpty;
  Path* path = index != kEmpty ? &pool_[index].path : nullptr;
  if (path != nullptr && path->dim == kUnknown) {
    // Same formula as Topology::UnawareDelay: hops * latency + bytes / bw on dimension `dim`.
    const int dim = topology_->FirstDifferingDim(src, dst);
    path->dim = dim;
    if (dim >= 0) {
      path->latency =
          topology_->Hops(dim, topology_->Coordinate(src, dim), topology_->Coordinate(dst, dim)) *
          topology_->latency_ns(dim);
      path->bytes_per_ns = topology_->bytes_per_ns(dim);
    }
  }
  if (path == nullptr || path->dim < 0) {
    const TimeNs delay = topology_->UnawareDelay(src, dst, bytes);
    if (!queue_->Fits(delay)) {
      const int dim = topology_->FirstDifferingDim(src, dst);
      queue_->Fail(topology_->OverflowError(src, dst, bytes, dim < 0 ? 0 : dim));
      return;
    }
    queue_->After(delay, handler, token);
    return;
  }
  Flow& f = pool_[index];
  f.recent = true;
  if (!path->sized || path->last_bytes != bytes) {
    path->sized = true;
    path->last_bytes = bytes;
    path->last_serialization = static_cast<double>(bytes) / path->bytes_per_ns;
  }
  const int dim = path->dim;
  const Wire::Times t = f.wire.Serialize(queue_->Now(), path->latency, path->last_serialization,
                                         /*carry_fraction=*/true);  // only a flow's pieces queue
  if (!queue_->Fits(t.arrival_delay)) {
    queue_->Fail(topology_->OverflowError(src, dst, bytes, dim));
    return;
  }
  f.wire.Put(t);
  if (!f.Counted()) {
    queue_->After(t.arrival_delay, handler, token);
    return;
  }
  ++f.in_flight;
  queue_->After(t.arrival_delay, this, arrivals_.Put(Arrival{index, handler, token}));
}

uint32_t CongestionUnawareModel::FlowFor(const FlowKey& key) {
  if (pool_.empty()) pool_.resize(size_t{kHome} * topology_->npus());
  const uint32_t home = static_cast<uint32_t>(key.src) * kHome;
  for (uint32_t j = home; j < home + kHome; ++j) {
    Flow& f = pool_[j];
    if (f.dst == key.dst && f.id == key.flow) {
      if (f.Idle(queue_->Now())) f.wire = Wire{};  // exactly a new flow
      return j;
    }
  }
  // A key is in one place only: a new key takes an idle home only when the table lacks it.
  if (used_ > 0) {
    const size_t mask = table_.size() - 1;
    for (size_t i = Home(key); table_[i].index != kEmpty; i = (i + 1) & mask) {
      if (table_[i].key == key) return OverflowFlowFor(key);
    }
  }
  for (uint32_t j = home; j < home + kHome; ++j) {
    Flow& f = pool_[j];
    if (f.Idle(queue_->Now())) {
      f = Flow{};
      f.dst = key.dst;
      f.id = key.flow;
      return j;
    }
  }
  return OverflowFlowFor(key);
}

uint32_t CongestionUnawareModel::OverflowFlowFor(const FlowKey& key) {
  if (2 * (used_ + 1) > table_.size()) Rebuild();
  const size_t mask = table_.size() - 1;
  for (size_t i = Home(key);; i = (i + 1) & mask) {
    Entry& e = table_[i];
    if (e.index == kEmpty) {
      if (free_flows_.empty()) {
        e.index = static_cast<uint32_t>(pool_.size());
        pool_.emplace_back();
      } else {
        e.index = free_flows_.back();
        free_flows_.pop_back();
        pool_[e.index] = Flow{};
      }
      e.key = key;
      ++used_;
      return e.index;
    }
    if (e.key == key) {
      if (pool_[e.index].Idle(queue_->Now())) pool_[e.index].wire = Wire{};  // a new flow
      return e.index;
    }
  }
}

void CongestionUnawareModel::Rebuild() {
  std::vector<Entry> old = std::move(table_);
  size_t live = 0;
  const auto keep = [this](const Entry& e) {
    return e.index != kEmpty && (!pool_[e.index].Idle(queue_->Now()) || pool_[e.index].recent);
  };
  for (const Entry& e : old) {
    if (e.index == kEmpty) continue;
    if (keep(e)) {
      ++live;
    } else {
      free_flows_.push_back(e.index);  // idle and unused of late: the same as absent
    }
  }
  size_t capacity = 1024;
  while (capacity < 4 * (live + 1)) capacity *= 2;
  table_.assign(capacity, Entry{});
  shift_ = 64 - std::countr_zero(capacity);
  used_ = 0;
  const size_t mask = capacity - 1;
  for (const Entry& e : old) {
    if (!keep(e)) continue;
    pool_[e.index].recent = false;
    size_t i = Home(e.key);
    while (table_[i].index != kEmpty) i = (i + 1) & mask;
    table_[i] = e;
    ++used_;
  }
}

void CongestionUnawareModel::OnEvent(uint64_t arrival) {
  const Arrival a = arrivals_.Take(static_cast<uint32_t>(arrival));
  --pool_[a.flow].in_flight;
  a.handler->OnEvent(a.token);
}

}  // namespace genie::sim
