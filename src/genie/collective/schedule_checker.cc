#include "genie/collective/schedule_checker.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "genie/collective/buffer_layout.h"
#include "genie/collective/symbolic_buffer.h"

namespace genie::collective {
namespace {

std::string R(ByteRange r) {
  return "[" + std::to_string(r.offset) + ", " + std::to_string(r.offset + r.length) + ")";
}

struct Message {
  Bytes bytes;
  uint16_t channel;
  std::vector<Piece> content;
  int step;  // sender's step index
};

using Key = std::tuple<int, int, uint32_t>;  // (src rank, dst rank, tag)
struct KeyHash {
  size_t operator()(const Key& k) const {
    return std::hash<uint64_t>()((static_cast<uint64_t>(std::get<0>(k)) << 40) ^
                                 (static_cast<uint64_t>(std::get<1>(k)) << 20) ^ std::get<2>(k));
  }
};

std::string StepName(const Schedule& s, size_t i) {
  const Step& st = s.steps[i];
  std::string out = "rank " + std::to_string(s.rank) + " step " + std::to_string(i) + " (" +
                    StepKindName(st.kind);
  if (st.kind == StepKind::kCopy) out += " " + R(st.send) + " into " + R(st.recv);
  if (HasRecv(st.kind)) {
    out += " from " + std::to_string(st.recv_peer) + " tag " + std::to_string(st.recv_tag) +
           " into " + R(st.recv);
  }
  if (HasSend(st.kind)) {
    out += " to " + std::to_string(st.send_peer) + " tag " + std::to_string(st.send_tag) + " " +
           R(st.send);
  }
  return out + ")";
}

Status CheckStructure(const CollectiveSpec& spec, const std::vector<Schedule>& all) {
  std::unordered_map<int, int> index;
  for (size_t i = 0; i < spec.group.size(); ++i) index[spec.group[i]] = static_cast<int>(i);
  for (size_t g = 0; g < all.size(); ++g) {
    const Schedule& s = all[g];
    if (s.rank != spec.group[g]) {
      return Status::InvalidArgument("schedule " + std::to_string(g) + " belongs to rank " +
                                     std::to_string(s.rank) + ", expected rank " +
                                     std::to_string(spec.group[g]));
    }
    // Phases tile the steps in order.
    uint32_t at = 0;
    for (const Phase& p : s.phases) {
      if (p.begin != at || p.end < p.begin) {
        return Status::InvalidArgument("rank " + std::to_string(s.rank) +
                                       ": phases do not tile the steps at step " +
                                       std::to_string(at));
      }
      for (uint32_t i = p.begin; i < p.end; ++i) {
        for (uint32_t d : s.steps[i].deps) {
          if (d < p.begin || d >= i) {
            return Status::InvalidArgument(StepName(s, i) + " depends on step " +
                                           std::to_string(d) + ", which is not an earlier step "
                                           "of its phase");
          }
        }
      }
      at = p.end;
    }
    if (at != s.steps.size()) {
      return Status::InvalidArgument("rank " + std::to_string(s.rank) + ": steps from " +
                                     std::to_string(at) + " on belong to no phase");
    }
    for (size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      auto bad_peer = [&](int peer) {
        return index.count(peer) == 0 || peer == s.rank;
      };
      if (HasSend(st.kind) && bad_peer(st.send_peer)) {
        return Status::InvalidArgument(StepName(s, i) + " sends to a rank outside the group (or "
                                       "itself)");
      }
      if (HasRecv(st.kind) && bad_peer(st.recv_peer)) {
        return Status::InvalidArgument(StepName(s, i) + " receives from a rank outside the "
                                       "group (or itself)");
      }
      if (st.kind == StepKind::kRecvReduceSend || st.kind == StepKind::kRecvCopySend) {
        if (!(st.send == st.recv)) {
          return Status::InvalidArgument(StepName(s, i) + " forwards a range other than the one "
                                         "it receives");
        }
      }
      if (st.kind == StepKind::kCopy && st.send.length != st.recv.length) {
        return Status::InvalidArgument(StepName(s, i) + " copies " + R(st.send) + " into " +
                                       R(st.recv) + ", a range of another length");
      }
      const ByteRange r = HasRecv(st.kind) ? st.recv : st.send;
      const ByteRange also = st.kind == StepKind::kCopy ? st.recv : r;
      if (r.offset + r.length > s.buffer_bytes || also.offset + also.length > s.buffer_bytes) {
        return Status::InvalidArgument(StepName(s, i) + " reaches past the " +
                                       std::to_string(s.buffer_bytes) + "-byte buffer");
      }
      if (st.channel >= s.channels) {
        return Status::InvalidArgument(StepName(s, i) + " uses channel " +
                                       std::to_string(st.channel) + " of " +
                                       std::to_string(s.channels));
      }
    }
  }
  return Status::Ok();
}

bool Overlaps(ByteRange a, ByteRange b) {
  return a.length > 0 && b.length > 0 && a.offset < b.offset + b.length &&
         b.offset < a.offset + a.length;
}

// Steps of one phase that nothing orders must not touch the same bytes (reductions into the
// same bytes commute and are allowed together).
Status CheckRaces(const Schedule& s, const CheckOptions& opt) {
  for (const Phase& p : s.phases) {
    const size_t m = p.end - p.begin;
    if (m < 2 || m > opt.max_race_steps) continue;
    const size_t words = (m + 63) / 64;
    std::vector<uint64_t> anc(m * words, 0);
    for (size_t i = 0; i < m; ++i) {
      for (uint32_t d : s.steps[p.begin + i].deps) {
        const size_t di = d - p.begin;
        for (size_t w = 0; w < words; ++w) anc[i * words + w] |= anc[di * words + w];
        anc[i * words + di / 64] |= uint64_t{1} << (di % 64);
      }
    }
    // Sweep the phase's byte accesses in offset order; compare only overlapping ones. A step
    // writes what it receives (or copies into) and reads what it sends (or copies from).
    struct Access {
      ByteRange r;
      size_t step;
      bool write;
    };
    std::vector<Access> acc;
    for (size_t i = 0; i < m; ++i) {
      const Step& a = s.steps[p.begin + i];
      if (a.kind == StepKind::kCopy) {
        if (a.send.length > 0) acc.push_back({a.send, i, false});
        if (a.recv.length > 0) acc.push_back({a.recv, i, true});
      } else if (HasRecv(a.kind) && a.recv.length > 0) {
        acc.push_back({a.recv, i, true});
      } else if (HasSend(a.kind) && a.send.length > 0) {
        acc.push_back({a.send, i, false});
      }
    }
    std::sort(acc.begin(), acc.end(), [](const Access& a, const Access& b) {
      return a.r.offset < b.r.offset;
    });
    std::vector<Access> active;
    for (const Access& cur : acc) {
      active.erase(std::remove_if(active.begin(), active.end(), [&](const Access& a) {
                     return a.r.offset + a.r.length <= cur.r.offset;
                   }), active.end());
      for (const Access& other : active) {
        const size_t i = std::min(other.step, cur.step), j = std::max(other.step, cur.step);
        if (i == j) continue;
        if (anc[j * words + i / 64] & (uint64_t{1} << (i % 64))) continue;
        const Step& a = s.steps[p.begin + i];
        const Step& b = s.steps[p.begin + j];
        const bool both_reduce = a.kind == StepKind::kRecvReduce && b.kind == StepKind::kRecvReduce;
        if ((other.write || cur.write) && !both_reduce && Overlaps(other.r, cur.r)) {
          return Status::InvalidArgument("schedule check: " + StepName(s, p.begin + i) + " and " +
                                         StepName(s, p.begin + j) +
                                         " touch the same bytes with nothing ordering them");
        }
      }
      active.push_back(cur);
    }
  }
  // Chunks run concurrently: no byte may belong to two chunks.
  std::vector<std::pair<ByteRange, uint32_t>> spans;
  for (const Phase& p : s.phases) {
    for (uint32_t i = p.begin; i < p.end; ++i) {
      const Step& st = s.steps[i];
      if (HasRecv(st.kind) || st.kind == StepKind::kCopy) spans.push_back({st.recv, p.chunk});
      if (HasSend(st.kind) || st.kind == StepKind::kCopy) spans.push_back({st.send, p.chunk});
    }
  }
  std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
    return a.first.offset < b.first.offset;
  });
  Bytes reach = 0;
  uint32_t reach_chunk = 0;
  bool have = false;
  for (const auto& [r, chunk] : spans) {
    if (r.length == 0) continue;
    if (have && r.offset < reach && chunk != reach_chunk) {
      return Status::InvalidArgument("rank " + std::to_string(s.rank) + ": chunks " +
                                     std::to_string(reach_chunk) + " and " +
                                     std::to_string(chunk) + " both touch bytes at " +
                                     std::to_string(r.offset));
    }
    if (!have || r.offset + r.length > reach) {
      reach = r.offset + r.length;
      reach_chunk = chunk;
      have = true;
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSchedules(const CollectiveSpec& spec, const std::vector<Schedule>& all,
                      const CheckOptions& options) {
  if (all.size() != spec.group.size()) {
    return Status::InvalidArgument("got " + std::to_string(all.size()) + " schedules for a group of " +
                                   std::to_string(spec.group.size()) + " ranks");
  }
  GENIE_RETURN_IF_ERROR(CheckStructure(spec, all));
  for (const Schedule& s : all) GENIE_RETURN_IF_ERROR(CheckRaces(s, options));

  const size_t n = all.size();
  std::unordered_map<int, size_t> index;
  for (size_t i = 0; i < n; ++i) index[all[i].rank] = i;
  std::vector<SymbolicBuffer> buf;
  std::vector<BufferLayout> layouts;
  for (size_t i = 0; i < n; ++i) {
    layouts.push_back(Layout(spec, static_cast<int>(i)));
    if (layouts.back().buffer_bytes != all[i].buffer_bytes) {
      return Status::InvalidArgument("rank " + std::to_string(all[i].rank) + ": schedule buffer is " +
                                     std::to_string(all[i].buffer_bytes) + " bytes, layout says " +
                                     std::to_string(layouts.back().buffer_bytes));
    }
    buf.emplace_back(all[i].buffer_bytes);
    for (const Region& r : layouts.back().initial) {
      buf.back().Write(r.range, {{r.range.length, true, r.sources}});
    }
  }

  // Dependency counters, phase gating (phase i of chunk k waits for phase i-1 of chunk k).
  struct RankState {
    std::vector<uint32_t> waiting;       // unfinished deps per step
    std::vector<std::vector<uint32_t>> dependents;
    std::vector<int> phase_of;           // step -> phase index
    std::vector<uint32_t> phase_left;    // unfinished steps per phase
    std::vector<int> next_phase;         // phase -> next phase of the same chunk (-1)
    std::vector<bool> phase_open;
    std::vector<bool> done;
    size_t finished = 0;
  };
  std::vector<RankState> st(n);
  std::deque<std::pair<size_t, uint32_t>> ready;
  for (size_t r = 0; r < n; ++r) {
    const Schedule& s = all[r];
    RankState& x = st[r];
    x.waiting.resize(s.steps.size());
    x.dependents.resize(s.steps.size());
    x.phase_of.resize(s.steps.size());
    x.done.assign(s.steps.size(), false);
    x.phase_left.resize(s.phases.size());
    x.next_phase.assign(s.phases.size(), -1);
    x.phase_open.assign(s.phases.size(), false);
    std::map<uint32_t, int> last_of_chunk;
    for (size_t p = 0; p < s.phases.size(); ++p) {
      const Phase& ph = s.phases[p];
      x.phase_left[p] = ph.end - ph.begin;
      for (uint32_t i = ph.begin; i < ph.end; ++i) x.phase_of[i] = static_cast<int>(p);
      auto it = last_of_chunk.find(ph.chunk);
      if (it == last_of_chunk.end()) {
        x.phase_open[p] = true;
      } else {
        x.next_phase[static_cast<size_t>(it->second)] = static_cast<int>(p);
      }
      last_of_chunk[ph.chunk] = static_cast<int>(p);
    }
    for (size_t i = 0; i < s.steps.size(); ++i) {
      x.waiting[i] = static_cast<uint32_t>(s.steps[i].deps.size());
      for (uint32_t d : s.steps[i].deps) x.dependents[d].push_back(static_cast<uint32_t>(i));
    }
  }
  auto open_phase = [&](size_t r, size_t p) {
    RankState& x = st[r];
    x.phase_open[p] = true;
    const Phase& ph = all[r].phases[p];
    for (uint32_t i = ph.begin; i < ph.end; ++i) {
      if (x.waiting[i] == 0) ready.push_back({r, i});
    }
  };
  std::vector<size_t> empty_phases;
  for (size_t r = 0; r < n; ++r) {
    for (size_t p = 0; p < all[r].phases.size(); ++p) {
      if (st[r].phase_open[p]) open_phase(r, p);
    }
  }

  std::unordered_map<Key, Message, KeyHash> wire;
  std::unordered_map<Key, uint32_t, KeyHash> parked;  // receiver step waiting for a message
  std::vector<std::string> errors;

  std::function<void(size_t, uint32_t)> complete;
  complete = [&](size_t r, uint32_t i) {
    RankState& x = st[r];
    x.done[i] = true;
    ++x.finished;
    for (uint32_t d : x.dependents[i]) {
      if (--x.waiting[d] == 0 && x.phase_open[static_cast<size_t>(x.phase_of[d])]) {
        ready.push_back({r, d});
      }
    }
    const size_t p = static_cast<size_t>(x.phase_of[i]);
    if (--x.phase_left[p] == 0) {
      // Open the chunk's next phase, skipping empty ones.
      int q = x.next_phase[p];
      while (q >= 0) {
        open_phase(r, static_cast<size_t>(q));
        if (x.phase_left[static_cast<size_t>(q)] > 0) break;
        q = x.next_phase[static_cast<size_t>(q)];
      }
    }
  };
  // Empty phases complete at once.
  for (size_t r = 0; r < n; ++r) {
    for (size_t p = 0; p < all[r].phases.size(); ++p) {
      if (st[r].phase_open[p] && st[r].phase_left[p] == 0) {
        int q = st[r].next_phase[p];
        while (q >= 0) {
          open_phase(r, static_cast<size_t>(q));
          if (st[r].phase_left[static_cast<size_t>(q)] > 0) break;
          q = st[r].next_phase[static_cast<size_t>(q)];
        }
      }
    }
  }

  auto post = [&](size_t r, uint32_t i, const std::vector<Piece>& content) -> bool {
    const Step& s = all[r].steps[i];
    const Key key{all[r].rank, s.send_peer, s.send_tag};
    if (wire.count(key) != 0) {
      errors.push_back(StepName(all[r], i) + " reuses a tag already in flight to that peer");
      return false;
    }
    wire[key] = {s.send.length, s.channel, content, static_cast<int>(i)};
    auto pk = parked.find(key);
    if (pk != parked.end()) {
      ready.push_back({index[s.send_peer], pk->second});
      parked.erase(pk);
    }
    return true;
  };

  while (!ready.empty() && errors.empty()) {
    auto [r, i] = ready.front();
    ready.pop_front();
    if (st[r].done[i]) continue;
    const Schedule& sch = all[r];
    const Step& s = sch.steps[i];
    if (s.kind == StepKind::kSend) {
      if (!post(r, i, buf[r].Read(s.send))) break;
      complete(r, i);
      continue;
    }
    if (s.kind == StepKind::kCopy) {
      buf[r].Write(s.recv, buf[r].Read(s.send));
      complete(r, i);
      continue;
    }
    const Key key{s.recv_peer, sch.rank, s.recv_tag};
    auto it = wire.find(key);
    if (it == wire.end()) {
      parked[key] = i;
      continue;
    }
    const Message msg = std::move(it->second);
    wire.erase(it);
    if (msg.bytes != s.recv.length) {
      errors.push_back(StepName(sch, i) + " expects " + std::to_string(s.recv.length) +
                       " bytes but rank " + std::to_string(s.recv_peer) + " step " +
                       std::to_string(msg.step) + " sends " + std::to_string(msg.bytes));
      break;
    }
    if (msg.channel != s.channel) {
      errors.push_back(StepName(sch, i) + " listens on channel " + std::to_string(s.channel) +
                       " but rank " + std::to_string(s.recv_peer) + " sends on channel " +
                       std::to_string(msg.channel));
      break;
    }
    if (HasReduce(s.kind)) {
      buf[r].Write(s.recv, Sum(buf[r].Read(s.recv), msg.content));
    } else {
      buf[r].Write(s.recv, msg.content);
    }
    if (HasSend(s.kind) && !post(r, i, buf[r].Read(s.send))) break;
    complete(r, i);
  }
  if (!errors.empty()) return Status::InvalidArgument("schedule check: " + errors.front());

  // Everything must have run; report the first stuck steps.
  std::string stuck;
  int shown = 0;
  for (size_t r = 0; r < n && shown < 4; ++r) {
    const Schedule& s = all[r];
    for (size_t i = 0; i < s.steps.size() && shown < 4; ++i) {
      if (st[r].done[i]) continue;
      if (st[r].waiting[i] > 0) continue;  // report the root causes only
      stuck += (shown ? "; " : "") + StepName(s, i) + " never got its message";
      ++shown;
    }
  }
  if (shown > 0) {
    return Status::InvalidArgument("schedule check: deadlock: " + stuck +
                                   " (a send is missing or its peer/tag does not match)");
  }
  for (size_t r = 0; r < n; ++r) {
    if (st[r].finished != all[r].steps.size()) {
      return Status::InvalidArgument("schedule check: deadlock on rank " +
                                     std::to_string(all[r].rank) + " (steps wait on each other)");
    }
  }
  if (!wire.empty()) {
    const auto& [key, msg] = *wire.begin();
    return Status::InvalidArgument(
        "schedule check: rank " + std::to_string(std::get<0>(key)) + " step " +
        std::to_string(msg.step) + " sends " + std::to_string(msg.bytes) + " bytes to rank " +
        std::to_string(std::get<1>(key)) + " with tag " + std::to_string(std::get<2>(key)) +
        " that no step receives (" + std::to_string(wire.size()) + " messages unreceived)");
  }

  // Final contents.
  for (size_t r = 0; r < n; ++r) {
    for (const Region& want : layouts[r].final) {
      if (want.range.length == 0) continue;
      const std::vector<Piece> have = buf[r].Read(want.range);
      Bytes at = 0;
      for (const Piece& p : have) {
        const std::vector<Source> expect = Shift(want.sources, at);
        if (!p.defined || p.terms != expect) {
          Piece e{p.length, true, expect};
          return Status::InvalidArgument(
              "schedule check: rank " + std::to_string(all[r].rank) + " ends with bytes " +
              R({want.range.offset + at, p.length}) + " holding " + Terms(p) +
              " but they must hold " + Terms(e));
        }
        at += p.length;
      }
    }
  }
  return Status::Ok();
}

}  // namespace genie::collective
