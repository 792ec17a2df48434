#include "genie/sim_backend/sim_backend.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "genie/common/check.h"
#include "genie/common/checked_math.h"
#include "genie/sim/host_slots.h"

namespace genie::sim_backend {

// Rank r's window on the shared simulation.
class SimBackend::RankView final : public Backend {
 public:
  RankView(SimBackend* sim, int rank) : sim_(sim), rank_(rank) {}
  int rank() const override { return rank_; }
  int world_size() const override { return sim_->world_size(); }
  TimeNs Now() const override { return sim_->queue_.Now(); }
  void After(TimeNs delay, Callback fn) override {
    GENIE_CHECK(delay >= 0) << "rank " << rank_ << ": After() with negative delay " << delay;
    if (!sim_->queue_.Fits(delay)) {
      // A compute duration or a local cost past the end of simulated time (a saturated value).
      sim_->Fail(Status::InvalidArgument(
                     "simulated time overflows: rank " + std::to_string(rank_) + " waits " +
                     (delay == kMaxTimeNs ? std::string("longer than 2^63-1 ns")
                                          : std::to_string(delay) + " ns") +
                     " from t=" + std::to_string(Now()) +
                     " ns, past 2^63-1 ns (about 292 years)"),
                 {rank_});
      return;
    }
    sim_->queue_.After(delay, std::move(fn));
  }
  void AfterEvent(TimeNs delay, EventHandler* handler, uint64_t arg) override {
    if (__builtin_expect(delay >= 0 && sim_->queue_.Fits(delay), 1)) {
      sim_->queue_.After(delay, handler, arg);
      return;
    }
    GENIE_CHECK(delay >= 0) << "rank " << rank_ << ": After() with negative delay " << delay;
    if (!sim_->queue_.Fits(delay)) {
      After(delay, [handler, arg] { handler->OnEvent(arg); });  // reports the overflow
      return;
    }
    sim_->queue_.After(delay, handler, arg);
  }
  void Send(const Message& msg, Callback done) override {
    sim_->Send(rank_, msg, sim_->Hold(std::move(done)));
  }
  void Recv(const Message& msg, Callback done) override {
    sim_->Recv(rank_, msg, sim_->Hold(std::move(done)));
  }
  void SendEvent(const Message& msg, EventHandler* handler, uint64_t arg) override {
    sim_->Send(rank_, msg, Done{handler, arg});
  }
  void RecvEvent(const Message& msg, EventHandler* handler, uint64_t arg) override {
    sim_->Recv(rank_, msg, Done{handler, arg});
  }
  void SendEventAfter(TimeNs first, TimeNs then, const Message& msg, EventHandler* handler,
                      uint64_t arg) override {
    sim_->SendAfter(rank_, first, then, msg, Done{handler, arg});
  }
  bool modelled() const override { return true; }
  ScheduleCache* schedule_cache() override { return &sim_->schedule_cache_; }

 private:
  SimBackend* sim_;
  int rank_;
};

Result<std::unique_ptr<SimBackend>> SimBackend::Create(const config::NetworkConfig& network,
                                                       sim::NetworkModelKind model, int world_size) {
  GENIE_ASSIGN_OR_RETURN(sim::Topology topology, sim::Topology::Create(network));
  if (world_size == 0) world_size = topology.npus();
  if (world_size < 0 || world_size > topology.npus()) {
    return Status::InvalidArgument(
        "the workload has " + std::to_string(world_size) + " ranks but " +
        (network.path.empty() ? std::string("the network") : network.path) + " has only " +
        std::to_string(topology.npus()) + " NPUs (raise npus_count)");
  }
  std::unique_ptr<SimBackend> backend(new SimBackend(std::move(topology), model, world_size));
  if (network.loopback_dimension >= 0) {
    backend->network_->set_loopback_dimension(network.loopback_dimension);
  }
  if (network.machine_gbps > 0) backend->network_->set_machine_bandwidth(network.machine_gbps);
  if (network.probe_rtt.interval_ns > 0) {
    backend->network_->set_probe_rtt(network.probe_rtt.interval_ns, network.probe_rtt.duration_ns,
                                     network.probe_rtt.gbps);
  }
  return backend;
}

SimBackend::SimBackend(sim::Topology topology, sim::NetworkModelKind model, int world_size)
    : topology_(std::move(topology)), channels_(world_size), rank_counters_(world_size) {
  network_ = sim::MakeNetworkModel(model, &topology_, &queue_);
  ranks_.reserve(world_size);
  for (int r = 0; r < world_size; ++r) ranks_.emplace_back(this, r);
}

SimBackend::~SimBackend() = default;

Backend& SimBackend::ForRank(int rank) {
  GENIE_CHECK(rank >= 0 && rank < world_size()) << "rank " << rank << " of " << world_size();
  return ranks_[rank];
}

uint32_t SimBackend::ChannelTable::FindOrOpen(const Key& key) {
  const size_t mask = entries_.size() - 1;
  for (size_t i = Home(key); entries_[i].index != kEmpty; i = (i + 1) & mask) {
    if (entries_[i].key == key) return entries_[i].index;
  }
  return Open(key);
}

uint32_t SimBackend::ChannelTable::Overflow(const Key& key) {
  if (2 * (size_ + 1) > entries_.size()) Grow();
  const size_t mask = entries_.size() - 1;
  size_t i = Home(key);
  while (entries_[i].index != kEmpty) i = (i + 1) & mask;  // GetIndex found no such key
  Entry& e = entries_[i];
  if (free_.empty()) {
    e.index = static_cast<uint32_t>(channels_.size());
    channels_.emplace_back();
  } else {
    e.index = free_.back();
    free_.pop_back();
  }
  e.key = key;
  Channel& ch = channels_[e.index];  // holds its key too: a delivery finds it by index alone
  ch.src = key.src;
  ch.dst = key.dst;
  ch.tag = key.tag;
  ++size_;
  return e.index;
}

void SimBackend::ChannelTable::EraseEntry(const Key& key) {
  const size_t mask = entries_.size() - 1;
  size_t i = Home(key);
  while (true) {
    if (entries_[i].index == kEmpty) return;
    if (entries_[i].key == key) break;
    i = (i + 1) & mask;
  }
  free_.push_back(entries_[i].index);
  // Backward shift: pull later entries of the probe run into the hole when their home
  // position does not lie cyclically in (hole, their position].
  for (size_t j = (i + 1) & mask; entries_[j].index != kEmpty; j = (j + 1) & mask) {
    const size_t home = Home(entries_[j].key);
    const bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
    if (stays) continue;
    entries_[i] = entries_[j];
    i = j;
  }
  entries_[i].index = kEmpty;
  --size_;
}

void SimBackend::ChannelTable::Grow() {
  std::vector<Entry> old = std::move(entries_);
  const size_t capacity = old.empty() ? 1024 : 2 * old.size();
  entries_.assign(capacity, Entry{});
  shift_ = 64 - std::countr_zero(capacity);
  const size_t mask = capacity - 1;
  for (const Entry& e : old) {
    if (e.index == kEmpty) continue;
    size_t i = Home(e.key);
    while (entries_[i].index != kEmpty) i = (i + 1) & mask;
    entries_[i] = e;
  }
}

void SimBackend::Slots::Spill(size_t n) {
  if (!spilled_) {
    heap_.clear();
    if (used_ == 1) heap_.push_back(std::move(first_));
    first_ = Slot();
    used_ = 0;
    spilled_ = true;
  }
  while (heap_.size() < n) heap_.emplace_back();
}

void SimBackend::Slots::EraseFront(size_t n) {
  if (!spilled_) {
    if (n > 0) {
      first_ = Slot();
      used_ = 0;
    }
    return;
  }
  heap_.erase(heap_.begin(), heap_.begin() + static_cast<std::ptrdiff_t>(n));
}

void SimBackend::RetireSlots(const Key& key, uint32_t index, Channel& ch) {
  auto release = [this](uint32_t held) {
    if (held == kNoPayload) return;
    held_[held].clear();
    held_[held].shrink_to_fit();
    free_held_.push_back(held);
  };
  while (ch.head < ch.slots.size() && ch.slots[ch.head].done) {
    release(ch.slots[ch.head].held);
    ch.slots[ch.head] = Slot();  // release callbacks and held payload now
    ++ch.head;
    ++ch.base;
  }
  if (ch.head == ch.slots.size()) {
    channels_.Erase(key, index);  // both counters equal base: the same as a fresh channel
  } else if (ch.head >= 16 && ch.head * 2 >= ch.slots.size()) {
    ch.slots.EraseFront(ch.head);
    ch.head = 0;
  }
}

void SimBackend::Fail(Status status, std::vector<int> ranks) {
  if (queue_.failed()) return;
  failed_ranks_ = std::move(ranks);
  queue_.Fail(std::move(status));
}

bool SimBackend::ReportSizeMismatch(const Key& key, Bytes sent, Bytes posted) {
  char tag[24];
  std::snprintf(tag, sizeof tag, "0x%llx", static_cast<unsigned long long>(key.tag));
  Fail(Status::InvalidArgument(
           "rank " + std::to_string(key.src) + " sent " + std::to_string(sent) +
           " bytes with tag " + tag + " but rank " + std::to_string(key.dst) +
           " posted a receive of " + std::to_string(posted) +
           " bytes; the ranks' traces disagree on this operation's size (genie inspect compares "
           "the ranks' collectives)"),
       {key.src, key.dst});
  return true;
}

SimBackend::Done SimBackend::Hold(Callback fn) {
  if (!fn) return Done{};
  auto [handler, arg] = queue_.Hold(std::move(fn));
  return Done{handler, arg};
}

inline void SimBackend::Send(int rank, const Message& msg, Done done) {
  GENIE_CHECK(msg.peer >= 0 && msg.peer < world_size())
      << "rank " << rank << " sends to rank " << msg.peer << " of " << world_size();
  Key key{rank, msg.peer, msg.tag};
  if (fold_ != nullptr && !fold_->IsRep(msg.peer)) {
    // What the image of `rank` sends to Rep(peer) at this very time in the unreduced run.
    key = Key{fold_->ToRep(msg.peer, rank), fold_->Rep(msg.peer), msg.tag};
  }
  const uint32_t channel = channels_.GetIndex(key);
  Channel& ch = channels_.At(channel);
  uint64_t seq = ch.next_send++;
  Slot& slot = SlotAt(ch, seq);
  slot.sent = true;
  slot.send_bytes = msg.bytes;
  slot.data = msg.data;
  slot.send_done = done;
  ++counters_.messages_sent;
  counters_.bytes_sent = SaturatingAdd(counters_.bytes_sent, msg.bytes);
  ++rank_counters_[rank].messages_sent;
  rank_counters_[rank].bytes_sent = SaturatingAdd(rank_counters_[rank].bytes_sent, msg.bytes);
  const bool was_failed = queue_.failed();
  network_->TransmitTo(rank, msg.peer, msg.bytes, msg.flow, msg.channel, &delivery_,
                       DeliveryToken(channel, seq));
  // The model refuses a delay past the end of time by failing the queue (it names the message).
  if (!was_failed && queue_.failed()) failed_ranks_ = {rank, msg.peer};
}

void SimBackend::SendAfter(int rank, TimeNs first, TimeNs then, const Message& msg, Done done) {
  if (first == 0 && then == 0) {
    Send(rank, msg, done);
    return;
  }
  const uint32_t token = pending_.Put(Pending{rank, first > 0 ? then : 0, msg, done});
  // Through the rank's view: a delay past the end of time fails as the runner's own would.
  ranks_[rank].AfterEvent(first > 0 ? first : then, &relay_, token);
}

void SimBackend::Relay::OnEvent(uint64_t token) {
  Pending& p = sim_->pending_.At(static_cast<uint32_t>(token));
  if (p.then > 0) {
    const TimeNs then = p.then;
    p.then = 0;
    sim_->ranks_[p.rank].AfterEvent(then, this, token);
    return;
  }
  // Sent from its slot, which Send leaves alone (it queues events, never a relay), then freed:
  // no copy of the 88-byte record.
  sim_->Send(p.rank, p.msg, p.done);
  sim_->pending_.Free(static_cast<uint32_t>(token));
}

void SimBackend::Delivery::OnEvent(uint64_t token) {
  const auto index = static_cast<uint32_t>(token >> 32);
  const Channel& ch = sim_->channels_.At(index);
  const uint64_t seq = ch.base + static_cast<uint32_t>(static_cast<uint32_t>(token) -
                                                       static_cast<uint32_t>(ch.base));
  sim_->Delivered(Key{ch.src, ch.dst, ch.tag}, seq, index);
}

inline void SimBackend::Delivered(const Key& key, uint64_t seq, uint32_t channel) {
  Channel& ch = channels_.At(channel);
  Slot& slot = SlotAt(ch, seq);
  slot.arrived = true;
  ++counters_.messages_delivered;
  ++rank_counters_[key.dst].messages_received;
  rank_counters_[key.dst].bytes_received =
      SaturatingAdd(rank_counters_[key.dst].bytes_received, slot.send_bytes);
  if (slot.posted && SizeMismatch(key, slot.send_bytes, slot.recv_bytes)) return;
  const Done send_done = slot.send_done;
  Done recv_done;
  if (slot.posted) {
    if (slot.data != nullptr && slot.into != nullptr) {
      std::memcpy(slot.into, slot.data, std::min(slot.send_bytes, slot.recv_bytes));
    }
    recv_done = slot.recv_done;
    slot.done = true;
    ++counters_.recvs_completed;
    Retire(key, channel, ch);  // `slot` and `ch` may be gone from here on
  } else if (slot.data != nullptr && slot.send_bytes > 0) {
    const auto* p = static_cast<const uint8_t*>(slot.data);
    if (free_held_.empty()) {
      slot.held = static_cast<uint32_t>(held_.size());
      held_.emplace_back();
    } else {
      slot.held = free_held_.back();
      free_held_.pop_back();
    }
    held_[slot.held].assign(p, p + slot.send_bytes);  // the sender may reuse its buffer after done
  }
  if (send_done.handler != nullptr) send_done.handler->OnEvent(send_done.arg);
  // If the send's completion failed the simulation, the queue dropped held closures: stop.
  if (recv_done.handler != nullptr && !queue_.failed()) {
    recv_done.handler->OnEvent(recv_done.arg);
  }
}

void SimBackend::Recv(int rank, const Message& msg, Done done) {
  GENIE_CHECK(msg.peer >= 0 && msg.peer < world_size())
      << "rank " << rank << " receives from rank " << msg.peer << " of " << world_size();
  Key key{msg.peer, rank, msg.tag};
  const uint32_t channel = channels_.GetIndex(key);
  Channel& ch = channels_.At(channel);
  uint64_t seq = ch.next_recv++;
  Slot& slot = SlotAt(ch, seq);
  slot.posted = true;
  slot.recv_bytes = msg.bytes;
  ++counters_.recvs_posted;
  if (!slot.arrived) {
    slot.into = msg.into;
    slot.recv_done = done;
    return;
  }
  // Arrived earlier and held: complete at the current time, as a new event (ASTRA-sim
  // schedules the receive handler with a zero delay).
  if (SizeMismatch(key, slot.send_bytes, slot.recv_bytes)) return;
  if (msg.into != nullptr && slot.held != kNoPayload && !held_[slot.held].empty()) {
    const std::vector<uint8_t>& held = held_[slot.held];
    std::memcpy(msg.into, held.data(), std::min<Bytes>(held.size(), msg.bytes));
  }
  slot.done = true;
  ++counters_.recvs_completed;
  Retire(key, channel, ch);
  if (done.handler != nullptr) queue_.After(0, done.handler, done.arg);
}

Status SimBackend::SetFold(const sim::RankFold* fold) {
  if (fold == nullptr || fold->world() != world_size()) {
    return Status::InvalidArgument("symmetry reduction: the fold is not over this world's ranks");
  }
  GENIE_ASSIGN_OR_RETURN(std::vector<int> links, fold->LinkFold(topology_));
  topology_.set_link_fold(std::move(links));
  fold_ = fold;
  return Status::Ok();
}

Status SimBackend::ShareHostLinks(int hosts) {
  if (fold_ != nullptr) return Status::InvalidArgument("host slots: not with symmetry reduction");
  if (hosts <= 0 || topology_.npus() % hosts != 0) {
    return Status::InvalidArgument("host slots: " + std::to_string(topology_.npus()) +
                                   " NPUs are not a whole number of slots of " +
                                   std::to_string(hosts) + " hosts");
  }
  topology_.set_link_fold(sim::HostSlotLinkFold(topology_, hosts), /*copies=*/false);
  return Status::Ok();
}

SimCounters SimBackend::counters() const {
  SimCounters c = counters_;
  c.events = queue_.executed();
  return c;
}

Status SimBackend::CheckAllMatched() const {
  std::vector<std::string> problems;
  size_t total = 0;
  channels_.ForEach([&](const Key& key, const Channel& ch) {
    for (size_t i = ch.head; i < ch.slots.size(); ++i) {
      const Slot& s = ch.slots[i];
      if (s.done) continue;
      std::string what;
      if (s.sent && !s.posted) {
        what = "rank " + std::to_string(key.src) + " sent " + std::to_string(s.send_bytes) +
               " B to rank " + std::to_string(key.dst) + " (tag " + std::to_string(key.tag) +
               ") but rank " + std::to_string(key.dst) + " never posted the receive";
      } else if (s.posted && !s.sent) {
        what = "rank " + std::to_string(key.dst) + " waits for a message from rank " +
               std::to_string(key.src) + " (tag " + std::to_string(key.tag) +
               ") that was never sent";
      } else if (s.sent && s.posted && !s.arrived) {
        what = "message rank " + std::to_string(key.src) + " -> " + std::to_string(key.dst) +
               " (tag " + std::to_string(key.tag) + ") still in flight";
      } else {
        continue;
      }
      ++total;
      problems.push_back(what);
    }
  });
  if (total == 0) return Status::Ok();
  // Table order is not the order of the trace: list the first 20 in sorted order.
  std::sort(problems.begin(), problems.end());
  if (problems.size() > 20) problems.resize(20);
  std::string msg = std::to_string(total) + " unmatched point-to-point operation(s) at t=" +
                    std::to_string(Now()) + " ns (check the trace's SEND/RECV pairs):";
  for (const std::string& p : problems) msg += "\n  " + p;
  if (total > problems.size()) msg += "\n  ...";
  return Status::Unavailable(msg);
}

nlohmann::json SimBackend::StatsJson(size_t max_links) const {
  nlohmann::json j;
  SimCounters c = counters();
  j["model"] = sim::NetworkModelName(model_kind());
  j["time_ns"] = Now();
  j["events"] = c.events;
  j["messages_sent"] = c.messages_sent;
  j["bytes_sent"] = c.bytes_sent;
  j["messages_delivered"] = c.messages_delivered;
  j["recvs_completed"] = c.recvs_completed;
  nlohmann::json ranks = nlohmann::json::array();
  for (const RankCounters& r : rank_counters_) {
    ranks.push_back({{"messages_sent", r.messages_sent}, {"bytes_sent", r.bytes_sent},
                     {"messages_received", r.messages_received},
                     {"bytes_received", r.bytes_received}});
  }
  j["ranks"] = ranks;
  std::vector<sim::LinkStats> links = network_->link_stats();
  if (model_kind() != sim::NetworkModelKind::kCongestionUnaware) {
    j["links_used"] = links.size();
    std::sort(links.begin(), links.end(), [](const sim::LinkStats& a, const sim::LinkStats& b) {
      return a.busy_ns != b.busy_ns ? a.busy_ns > b.busy_ns : a.link < b.link;
    });
    nlohmann::json busiest = nlohmann::json::array();
    for (size_t i = 0; i < links.size() && i < max_links; ++i) {
      const sim::LinkStats& l = links[i];
      busiest.push_back({{"link", topology_.LinkName(l.link)}, {"messages", l.messages},
                         {"bytes", l.bytes}, {"busy_ns", l.busy_ns},
                         {"queued_ns", l.queued_ns}, {"max_queue", l.max_queue}});
    }
    j["busiest_links"] = busiest;
  }
  return j;
}

}  // namespace genie::sim_backend
