#include "genie/sim/flow_model.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"

namespace genie::sim {
namespace {

// The first whole ns at or after `t`. A value a hair above a whole ns (floating-point noise
// of rate x time products) counts as that ns, so that exact figures stay exact.
TimeNs CeilNs(double t) {
  if (!(t < 9.2e18)) return kMaxTimeNs;
  const double whole = std::floor(t);
  return SaturatingTimeNs(t - whole <= 1e-6 ? whole : whole + 1);
}

bool SameRate(double a, double b) { return std::fabs(a - b) <= 1e-12 * std::max(a, b); }

// Min-heap order for the water-filling: smallest share first, then the lowest link id, so
// runs are deterministic.
struct Later {
  template <typename S>
  bool operator()(const S& a, const S& b) const {
    return a.share != b.share ? a.share > b.share : a.link > b.link;
  }
};

}  // namespace

FlowModel::FlowModel(const Topology* topology, EventQueue* queue)
    : topology_(topology), queue_(queue), links_(topology->num_links()) {
  for (int id = 0; id < topology->num_links(); ++id) {
    links_[id].capacity = topology->link_bytes_per_ns(id) * topology->link_goodput(id);
    links_[id].latency_ns = topology->link_latency_ns(id);
    links_[id].overhead_ns = topology->link_message_overhead_ns(id);
    links_[id].bucket = topology->link_burst_bytes(id) * topology->link_goodput(id);
    links_[id].tokens = links_[id].bucket;
  }
}

void FlowModel::Transmit(int src, int dst, Bytes bytes, uint64_t flow, uint16_t channel,
                         std::function<void()> delivered) {
  const int c = ConnectionFor(src, dst, channel);
  connections_[c].queued.push_back({bytes, std::move(delivered), flow});
  Pump(c, static_cast<double>(queue_->Now()));
}

int FlowModel::ConnectionFor(int src, int dst, uint16_t channel) {
  const uint64_t key = ((static_cast<uint64_t>(src) * static_cast<uint64_t>(topology_->npus()) +
                         static_cast<uint64_t>(dst))
                        << 16) |
                       channel;
  auto [it, added] = connection_index_.try_emplace(key, static_cast<int>(connections_.size()));
  if (added) {
    connections_.emplace_back();
    connections_.back().src = src;
    connections_.back().dst = dst;
    connections_.back().channel = channel;
  }
  return it->second;
}

void FlowModel::Pump(int c, double at) {
  // By index: starting a message may grow flows_, never connections_ (only Transmit adds).
  while (connections_[c].sending == 0 && !connections_[c].queued.empty() && !queue_->failed()) {
    Connection::Queued next = std::move(connections_[c].queued.front());
    connections_[c].queued.pop_front();
    StartMessage(c, at, std::move(next));
  }
}

void FlowModel::StartMessage(int c, double at, Connection::Queued message) {
  if (probe_interval_ > 0) ProbeDue(c, at);
  const int src = connections_[c].src, dst = connections_[c].dst;
  const int paths = topology_->FlowPaths(src, dst, connections_[c].channel);
  const Bytes bytes = message.bytes;
  if (paths == 1) {
    Start(c, at, 0, 1, bytes, bytes, message.chunk, std::move(message.delivered), nullptr);
    return;
  }
  // ECMP with the hash unknown: one sub-flow per spine, bytes / paths each (the first
  // bytes % paths one more); the message is delivered when the last of them is.
  struct Pending {
    int left;
    std::function<void()> delivered;
  };
  auto pending = std::make_shared<Pending>(Pending{paths, std::move(message.delivered)});
  for (int p = 0; p < paths; ++p) {
    const Bytes part = bytes / paths + (static_cast<Bytes>(p) < bytes % paths ? 1 : 0);
    Start(
        c, at, p, paths, part, bytes, message.chunk,
        [pending] {
          if (--pending->left == 0) pending->delivered();
        },
        p == 0 ? nullptr : &first_route_);
    if (p == 0) first_route_ = flows_[last_started_].route;
    if (queue_->failed()) return;
  }
}

void FlowModel::Start(int c, double at, int path, int paths, Bytes bytes, Bytes message,
                      uint64_t chunk, std::function<void()> delivered,
                      const std::vector<int>* counted) {
  const int src = connections_[c].src, dst = connections_[c].dst;
  int f;
  if (free_flows_.empty()) {
    f = static_cast<int>(flows_.size());
    flows_.emplace_back();
  } else {
    f = free_flows_.back();
    free_flows_.pop_back();
  }
  last_started_ = f;
  Flow& flow = flows_[f];
  topology_->FlowRoute(src, dst, path, &flow.route, connections_[c].channel);
  flow.connection = c;
  flow.bytes = bytes;
  flow.delivered = std::move(delivered);
  flow.scheduled = false;
  flow.rate = 0;
  flow.remaining = static_cast<double>(bytes);
  flow.updated = queue_->Now();
  flow.start_exact = at;
  double latency = 0, overhead = 0;
  for (int id : flow.route) {
    latency += links_[id].latency_ns;
    overhead = std::max(overhead, links_[id].overhead_ns);
  }
  flow.tail_ns = latency + overhead;
  flow.floor_at = 0;
  flow.paths = paths;
  flow.within_host = !flow.route.empty() &&
                     std::all_of(flow.route.begin(), flow.route.end(),
                                 [&](int id) { return links_[id].loopback; });
  // One of `paths` sub-flows of a message split over the spines: together at most what one
  // path's slowest link gives (a connection rides one spine; the split is where, not how fast).
  flow.cap = 0;
  if (paths > 1) {
    double slowest = links_[flow.route.front()].capacity;
    for (int id : flow.route) slowest = std::min(slowest, links_[id].capacity);
    flow.cap = slowest / paths;
  }
  const TimeNs now = queue_->Now();
  const bool shaped = !flow.route.empty() && bytes > 0 &&
                      std::all_of(flow.route.begin(), flow.route.end(),
                                  [&](int id) {
                                    return links_[id].bucket > 0 || links_[id].loopback;
                                  }) &&
                      std::any_of(flow.route.begin(), flow.route.end(),
                                  [&](int id) { return links_[id].bucket > 0; });
  const bool measured =
      bytes > 0 && std::any_of(flow.route.begin(), flow.route.end(),
                               [&](int id) { return topology_->MessageTimesApply(id); });
  if (shaped && measured && topology_->has_burst_message_times()) {
    flow.floor_at = at + topology_->BurstFloorNs(message);
  } else if (measured && topology_->has_message_times()) {
    // A measured table of message times (network.yml message_times) costs a message between
    // hosts what one of its size really took, instead of its bytes at the bulk rate.
    const Topology::MessageCost cost = topology_->MeasuredCost(message);
    flow.remaining *= cost.wire_bytes / static_cast<double>(message);
    flow.tail_ns += cost.extra_ns;
  }
  if (shaped) {
    // The burst: what the emptiest bucket on the path holds leaves at once. A split message's
    // sub-flow takes 1/paths of its spine's bucket: the whole message takes one spine's bucket
    // (its connection rides one spine), each with chance 1/paths.
    double burst = flow.remaining;
    for (int id : flow.route) {
      Link& link = links_[id];
      if (link.loopback) continue;
      if (link.flows.empty()) {
        // (A spine link's idle_since, the latest of its leaf's hosts, may lie ahead.)
        const double idle = std::max(0.0, static_cast<double>(now) - link.idle_since);
        link.tokens = std::min(link.bucket, link.tokens + link.capacity * idle);
        link.idle_since = static_cast<double>(now);
      }
      const bool shared = paths > 1 && topology_->IsSpineLink(id);
      burst = std::min(burst, shared ? link.tokens / paths : link.tokens);
    }
    for (int id : flow.route) {
      if (!links_[id].loopback) links_[id].tokens -= burst;
    }
    flow.remaining -= burst;
  }
  if (flow.route.empty() || bytes == 0) {  // to itself, or nothing to serialize: off at once
    Deliver(f, at);
    return;
  }
  ++active_;
  ++connections_[c].sending;
  flow.pace = 0;
  flow.chunk = chunk;
  if (chunk != 0) {
    std::vector<int>& members = chunks_[chunk].flows;
    flow.chunk_slot = static_cast<uint32_t>(members.size());
    members.push_back(f);
  }
  if (machine_loopback_ >= 0) {
    // Last, as no link of the path's own (caps, shapers, measured times): within a host
    // (loopback links only) a byte costs the cores one loopback byte; between hosts it crosses
    // veths, a bridge and shapers instead (its loopback link is the model's route to a slot).
    const bool within = std::all_of(flow.route.begin(), flow.route.end(),
                                    [&](int id) { return links_[id].loopback; });
    flow.machine_weight = within ? 1.0 : kFabricByteCost;
    flow.route.push_back(machine_loopback_);
  }
  flow.slot.resize(flow.route.size());
  for (size_t i = 0; i < flow.route.size(); ++i) {
    Link& link = links_[flow.route[i]];
    flow.slot[i] = static_cast<uint32_t>(link.flows.size());
    link.flows.push_back(f);
    if (link.flows.size() == 1) link.busy_since = now;
    link.max_flows = std::max(link.max_flows, static_cast<uint32_t>(link.flows.size()));
    // A message split over the spines counts once on the links its sub-flows share.
    if (counted == nullptr ||
        std::find(counted->begin(), counted->end(), flow.route[i]) == counted->end()) {
      ++link.messages;
    }
    link.bytes = SaturatingAdd(link.bytes, bytes);
  }
  Touch(flow.route);
}

void FlowModel::Touch(const std::vector<int>& links) {
  pending_.insert(pending_.end(), links.begin(), links.end());
  if (settle_scheduled_) return;
  settle_scheduled_ = true;
  queue_->After(0, [this] { Settle(); });
}

void FlowModel::Settle() {
  settle_scheduled_ = false;
  seeds_.swap(pending_);
  pending_.clear();
  Recompute(seeds_);
}

void FlowModel::Recompute(const std::vector<int>& seeds) {
  if (++epoch_ == 0) {  // wrapped: forget every mark
    for (Link& l : links_) l.mark = 0;
    for (Flow& fl : flows_) fl.mark = 0;
    epoch_ = 1;
  }
  ++recomputations_;
  // The connected component: links reachable from the seeds through flows that share them.
  stack_.clear();
  comp_links_.clear();
  comp_flows_.clear();
  for (int l : seeds) {
    if (links_[l].mark == epoch_) continue;
    links_[l].mark = epoch_;
    stack_.push_back(l);
  }
  while (!stack_.empty()) {
    const int l = stack_.back();
    stack_.pop_back();
    comp_links_.push_back(l);
    for (int f : links_[l].flows) {
      Flow& flow = flows_[f];
      if (flow.mark == epoch_) continue;
      flow.mark = epoch_;
      comp_flows_.push_back(f);
      for (int l2 : flow.route) {
        if (links_[l2].mark == epoch_) continue;
        links_[l2].mark = epoch_;
        stack_.push_back(l2);
      }
    }
  }
  flows_recomputed_ += comp_flows_.size();
  // Bytes sent so far at the old rates.
  const TimeNs now = queue_->Now();
  for (int f : comp_flows_) {
    Flow& flow = flows_[f];
    flow.remaining -= flow.rate * static_cast<double>(now - flow.updated);
    if (flow.remaining < 0) flow.remaining = 0;
    flow.updated = now;
  }
  for (int f : comp_flows_) SetPace(f, 0);
  Fill();
  PaceChunks(now);
  // A flow whose rate did not change keeps its end event.
  for (int f : comp_flows_) {
    Flow& flow = flows_[f];
    if (flow.scheduled && SameRate(flow.rate, flow.new_rate)) continue;
    flow.rate = flow.new_rate;
    double end = static_cast<double>(now) + flow.remaining / flow.rate;
    if (!flow.scheduled && flow.start_exact < static_cast<double>(now)) {
      // Started by its connection at the exact end of the message before it, a fraction of a
      // ns ago: its bytes have been leaving since then (else each message of a connection
      // would lose the fraction, and 16-byte slices take 1 ns each).
      end = flow.start_exact + flow.remaining / flow.rate;
      flow.remaining = std::max(0.0, end - static_cast<double>(now)) * flow.rate;
    }
    ScheduleEnd(f, end);
    if (queue_->failed()) return;
  }
}

void FlowModel::Fill() {
  if (++pass_ == 0) {  // wrapped: forget every mark
    for (Flow& fl : flows_) fl.frozen = 0;
    pass_ = 1;
  }
  // Progressive filling: the link with the smallest fair share fixes its unfrozen flows at
  // that share; the share comes off their other links, whose shares can only grow.
  heap_.clear();
  for (int l : comp_links_) {
    Link& link = links_[l];
    // A folded fabric link carries its flows once for each of the copies it stands for
    // (Topology::link_copies): each class gets capacity / copies, as each copy does unreduced.
    // (The machine-wide loopback is no fabric link: one copy, and no connection fills its gaps.)
    const bool machine = l == machine_loopback_;
    const int copies = machine ? 1 : topology_->link_copies(l);
    link.left = copies == 1 ? link.capacity : link.capacity / copies;
    link.unfrozen = static_cast<uint32_t>(link.flows.size());
    link.weight = static_cast<double>(link.unfrozen);
    if (machine) {
      link.weight = 0;
      for (int f : link.flows) link.weight += flows_[f].machine_weight;
    }
    if (link.unfrozen > 0) heap_.push_back({link.left / link.weight, l});
  }
  // A capped flow (a sub-flow of a split message, a paced one) enters as a link of its own:
  // its cap, as link -1 - f.
  for (int f : comp_flows_) {
    const Flow& flow = flows_[f];
    const double own = CapOf(flow);
    const double cap = own > 0 && flow.pace > 0 ? std::min(own, flow.pace)
                                                : std::max(own, flow.pace);
    if (cap > 0) heap_.push_back({cap, -1 - f});
  }
  std::make_heap(heap_.begin(), heap_.end(), Later{});
  // Fixes flow f at `share`; the share comes off its links (but `except`).
  auto freeze = [&](int f, double share, int except) {
    Flow& flow = flows_[f];
    flow.frozen = pass_;
    flow.new_rate = share;
    for (int l2 : flow.route) {
      Link& other = links_[l2];
      const double w = l2 == machine_loopback_ ? flow.machine_weight : 1.0;
      other.left = std::max(0.0, other.left - share * w);
      other.weight -= w;
      --other.unfrozen;
      if (l2 != except && other.unfrozen > 0) {
        heap_.push_back({other.left / other.weight, l2});
        std::push_heap(heap_.begin(), heap_.end(), Later{});
      }
    }
  };
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Share top = heap_.back();
    heap_.pop_back();
    if (top.link < 0) {
      const int f = -1 - top.link;
      if (flows_[f].frozen != pass_) freeze(f, top.share, -1);
      continue;
    }
    Link& link = links_[top.link];
    if (link.unfrozen == 0 || top.share != link.left / link.weight) continue;  // stale entry
    for (int f : link.flows) {
      if (flows_[f].frozen != pass_) freeze(f, top.share, top.link);
    }
  }
}

void FlowModel::PaceChunks(TimeNs now) {
  if (!Pace(now)) return;
  for (int f : comp_flows_) flows_[f].unpaced_rate = flows_[f].new_rate;
  Fill();
  // A pace no other flow gains by is dropped: it would only hold its links longer (a shaped
  // link refills its bucket only while idle).
  bool dropped = false;
  for (int f : comp_flows_) {
    if (!(flows_[f].pace > 0)) continue;
    bool gains = false;
    for (int l : flows_[f].route) {
      for (int g : links_[l].flows) {
        gains = gains || (g != f && flows_[g].new_rate > flows_[g].unpaced_rate * (1 + 1e-9));
      }
    }
    if (!gains) {
      SetPace(f, 0);
      dropped = true;
    }
  }
  if (dropped) Fill();
}

bool FlowModel::Pace(TimeNs now) {
  const double t = static_cast<double>(now);
  // When each chunk of the component ends: its slowest flow, at the rates just filled (flows
  // of the chunk outside the component at their scheduled end).
  chunk_end_.clear();
  for (int f : comp_flows_) {
    const uint64_t chunk = flows_[f].chunk;
    if (chunk == 0 || chunk_end_.count(chunk) != 0) continue;
    double last = 0;
    for (int m : chunks_.at(chunk).flows) {
      const Flow& o = flows_[m];
      const double end = o.mark != epoch_ ? o.end
                         : o.new_rate > 0 ? t + o.remaining / o.new_rate
                                          : t;
      last = std::max(last, end);
    }
    chunk_end_[chunk] = last;
  }
  bool paced = false;
  for (int f : comp_flows_) {
    Flow& flow = flows_[f];
    if (flow.chunk == 0 || !(flow.new_rate > 0) || !connections_[flow.connection].queued.empty()) {
      continue;
    }
    const double last = chunk_end_[flow.chunk];
    // Only one that would end clearly sooner (1 % of the time left, and 1 us).
    if (!(last - (t + flow.remaining / flow.new_rate) > 0.01 * (last - t) + 1000)) continue;
    SetPace(f, flow.remaining / (last - t));
    paced = true;
  }
  return paced;
}

void FlowModel::SetPace(int f, double pace) {
  Flow& flow = flows_[f];
  if ((flow.pace > 0) == (pace > 0)) {
    flow.pace = pace;
    return;
  }
  if (flow.chunk != 0) chunks_[flow.chunk].paced += pace > 0 ? 1 : -1;
  flow.pace = pace;
}

void FlowModel::ScheduleEnd(int f, double end) {
  Flow& flow = flows_[f];
  const TimeNs now = queue_->Now();
  flow.end = end;  // rate > 0: capacity > 0
  const TimeNs when = CeilNs(flow.end);
  const TimeNs delay = when == kMaxTimeNs ? kMaxTimeNs : std::max<TimeNs>(0, when - now);
  if (!queue_->Fits(delay)) {
    queue_->Fail(Overflow(flow));
    return;
  }
  flow.generation = ++next_generation_;
  flow.scheduled = true;
  queue_->After(delay, [this, f, g = flow.generation] { Ended(f, g); });
}

void FlowModel::Ended(int f, uint64_t generation) {
  if (flows_[f].generation != generation || !flows_[f].scheduled) return;  // rate changed
  flows_[f].scheduled = false;
  --active_;
  Release(f);
  Touch(flows_[f].route);  // its bandwidth goes to the flows it shared links with
  const int c = flows_[f].connection;
  const double end = flows_[f].end;
  Deliver(f, end);
  // Its connection sends the next message once the whole of this one has left, from the exact
  // time it did.
  if (--connections_[c].sending == 0) Pump(c, end);
}

void FlowModel::Release(int f) {
  Flow& flow = flows_[f];
  const TimeNs now = queue_->Now();
  if (flow.chunk != 0) {
    SetPace(f, 0);
    auto it = chunks_.find(flow.chunk);
    Chunk& chunk = it->second;
    const int moved = chunk.flows.back();
    chunk.flows[flow.chunk_slot] = moved;
    flows_[moved].chunk_slot = flow.chunk_slot;
    chunk.flows.pop_back();
    if (chunk.flows.empty()) {
      chunks_.erase(it);
    } else if (chunk.paced > 0) {
      // The chunk's slowest may have been this one: its paced flows are paced again.
      for (int m : chunk.flows) {
        if (flows_[m].pace > 0) Touch(flows_[m].route);
      }
    }
    flow.chunk = 0;
  }
  for (size_t i = 0; i < flow.route.size(); ++i) {
    Link& link = links_[flow.route[i]];
    const uint32_t at = flow.slot[i];
    const int moved = link.flows.back();
    link.flows[at] = moved;
    link.flows.pop_back();
    if (moved != f) {
      Flow& m = flows_[moved];
      for (size_t j = 0; j < m.route.size(); ++j) {
        if (m.route[j] == flow.route[i]) m.slot[j] = at;
      }
    }
    if (link.flows.empty()) {
      link.busy_ns = SaturatingAdd(link.busy_ns, now - link.busy_since);
      link.idle_since = static_cast<double>(now);
    }
  }
}

void FlowModel::Deliver(int f, double end) {
  Flow& flow = flows_[f];
  const TimeNs now = queue_->Now();
  Connection& connection = connections_[flow.connection];
  // In order on its connection: never before the message sent ahead of it.
  const TimeNs when = std::max(
      {CeilNs(end + flow.tail_ns), CeilNs(flow.floor_at), connection.last_delivery});
  connection.last_delivery = when;
  const TimeNs delay = when == kMaxTimeNs ? kMaxTimeNs : std::max<TimeNs>(0, when - now);
  if (!queue_->Fits(delay)) {
    queue_->Fail(Overflow(flow));
    return;
  }
  std::function<void()> delivered = std::move(flow.delivered);
  flow.delivered = nullptr;
  free_flows_.push_back(f);  // `flow` may be reused (and moved) from here on
  queue_->After(delay, std::move(delivered));
}

Status FlowModel::Overflow(const Flow& flow) const {
  const Connection& c = connections_[flow.connection];
  const int dim = topology_->FirstDifferingDim(c.src, c.dst);
  return topology_->OverflowError(c.src, c.dst, flow.bytes, dim < 0 ? 0 : dim);
}

void FlowModel::set_idle_since(int npu, double since) {
  // Its links: the first of a route out of it and the last of one into it (to and from its
  // neighbour in dimension 0, through the first hop every route of it takes).
  std::vector<int> a = topology_->Address(npu);
  a[0] = a[0] == 0 ? 1 : 0;
  const int other = topology_->RankOf(a);
  std::vector<int> out, in;
  topology_->FlowRoute(npu, other, 0, &out);
  topology_->FlowRoute(other, npu, 0, &in);
  // A host's ranks in slots (sim/host_slots.h) share these links: idle since the last of them
  // stopped, whatever order they are given in.
  for (int id : {out.empty() ? -1 : out.front(), in.empty() ? -1 : in.back()}) {
    if (id < 0 || links_[id].bucket == 0) continue;
    Link& link = links_[id];
    link.tokens = 0;
    link.idle_since = link.idle_set ? std::max(link.idle_since, since) : since;
    link.idle_set = true;
  }
  // Its leaf's links to and from the spines, shared with the leaf's other hosts: idle since
  // the last of them became idle (each carried until its hosts' last messages had passed).
  topology_->LeafSpineLinks(npu, &out);
  for (int id : out) {
    Link& link = links_[id];
    if (link.bucket == 0) continue;
    link.idle_since = link.idle_set ? std::max(link.idle_since, since) : since;
    link.tokens = 0;
    link.idle_set = true;
  }
}

void FlowModel::set_loopback_dimension(int dim) {
  for (int id = 0; id < topology_->num_links(); ++id) {
    links_[id].loopback = !topology_->IsSpineLink(id) && topology_->link(id).dim == dim &&
                          links_[id].bucket == 0;
  }
}

void FlowModel::set_machine_bandwidth(double gbps) {
  if (!(gbps > 0) || machine_loopback_ >= 0) return;
  machine_loopback_ = static_cast<int>(links_.size());
  links_.emplace_back().capacity = gbps * (1 << 30) / 1e9;  // payload, GB/s of 2^30 B
}

void FlowModel::set_probe_rtt(double interval_ns, double duration_ns, double gbps) {
  if (!(interval_ns > 0) || !(duration_ns > 0) || !(gbps > 0)) return;
  probe_interval_ = interval_ns;
  probe_duration_ = duration_ns;
  probe_rate_ = gbps * (1 << 30) / 1e9;  // payload, GB/s of 2^30 B
}

void FlowModel::set_opened_at(int npu, double at) { opened_at_[npu] = at; }

void FlowModel::ProbeDue(int c, double at) {
  Connection& k = connections_[c];
  if (k.probe_due < 0) {
    // First seen at `at`: a simulation may start long after the connections opened (one
    // iteration of a run), so their probes are placed on bbr's grid from then on, every
    // interval + duration, as a connection that kept sending has them.
    auto opened = [&](int npu) {
      auto it = opened_at_.find(npu);
      return it == opened_at_.end() ? 0.0 : it->second;
    };
    const double period = probe_interval_ + probe_duration_;
    double due = opened(k.src) + probe_interval_;
    if (at >= due) {
      due += std::floor((at - due) / period) * period;  // the latest begun by `at`
      if (at < due + probe_duration_) {
        BeginProbe(c, due);  // in it now
        return;
      }
      due += period;
    }
    k.probe_due = due;
  }
  if (at < k.probe_until) return;  // in one now
  if (at >= k.probe_due) {
    BeginProbe(c, at);  // due while it was idle: bbr probes when it next sends
    return;
  }
  if (k.probe_check) return;
  // Due while this message may still be on the wire: look again then.
  const TimeNs delay = std::max<TimeNs>(0, CeilNs(k.probe_due) - queue_->Now());
  if (!queue_->Fits(delay)) return;  // beyond the simulation's horizon
  k.probe_check = true;
  queue_->After(delay, [this, c] {
    Connection& conn = connections_[c];
    conn.probe_check = false;
    const double now = static_cast<double>(queue_->Now());
    if (conn.sending > 0 && now >= conn.probe_due && now >= conn.probe_until) {
      BeginProbe(c, now);
      TouchConnection(c);
    }
  });
}

void FlowModel::BeginProbe(int c, double at) {
  Connection& k = connections_[c];
  k.probe_until = at + probe_duration_;
  k.probe_due = k.probe_until + probe_interval_;
  const TimeNs delay = std::max<TimeNs>(0, CeilNs(k.probe_until) - queue_->Now());
  if (!queue_->Fits(delay)) return;  // lasts past the simulation's horizon
  queue_->After(delay, [this, c] {
    TouchConnection(c);  // the cap lifts
    // A message still on the wire may outlast the next interval too.
    if (connections_[c].sending > 0) ProbeDue(c, static_cast<double>(queue_->Now()));
  });
}

double FlowModel::CapOf(const Flow& f) const {
  if (!(probe_interval_ > 0) || f.within_host ||
      !(static_cast<double>(queue_->Now()) < connections_[f.connection].probe_until)) {
    return f.cap;
  }
  const double probe = probe_rate_ / f.paths;
  return f.cap > 0 ? std::min(f.cap, probe) : probe;
}

void FlowModel::TouchConnection(int c) {
  for (const Flow& f : flows_) {
    if (f.connection == c && f.delivered && !f.route.empty()) Touch(f.route);
  }
}

std::vector<LinkStats> FlowModel::link_stats() const {
  std::vector<LinkStats> out;
  for (int i = 0; i < topology_->num_links(); ++i) {
    const Link& l = links_[i];
    if (l.messages == 0) continue;
    out.push_back(
        LinkStats{i, l.messages, l.bytes, l.busy_ns, 0, l.max_flows > 0 ? l.max_flows - 1 : 0});
  }
  return out;
}

}  // namespace genie::sim
