#include "genie/driver/pair_paths.h"

#include <iostream>

#include "genie/testbed/shell.h"

namespace genie::driver {
namespace {

// Below this many bytes out of the sender's leaf the probe left no trace (the pair never sent).
constexpr double kMinBytes = 64 * 1024;
// Crossings carrying less than this share are left out (another direction's ACKs).
constexpr double kMinShare = 0.05;

}  // namespace

PairPaths::PairPaths(const testbed::Layout* layout, const std::vector<std::string>& hosts)
    : layout_(layout) {
  if (layout == nullptr || layout->spec.kind != testbed::TopologyKind::kLeafSpine) return;
  leaf_.assign(hosts.size(), "");
  for (size_t r = 0; r < hosts.size(); ++r) {
    const testbed::Host* h = layout->FindHost(hosts[r]);
    if (h == nullptr || h->nics.empty()) continue;
    const testbed::Link* link = layout->FindLink(h->nics[0].link);
    if (link != nullptr) leaf_[r] = link->b.node;
    active_ = active_ || !leaf_[r].empty();
  }
  if (!active_) return;
  for (const auto& l : layout->links) {
    if (l.a.node.rfind('l', 0) != 0 || l.b.node.rfind('s', 0) != 0) continue;  // leaf-spine only
    ends_.push_back({l.a.netns, l.a.ifname});
    ends_.push_back({l.b.netns, l.b.ifname});
  }
  auto sampler = testbed::BacklogSampler::Open(ends_);
  if (sampler.ok()) {
    sampler_ = std::move(*sampler);
  } else {
    std::cerr << "genie: warning: the switch links' queues are not sampled (" << sampler.status().message()
              << "): a slow link may be named only with its neighbour\n";
  }
}

void PairPaths::Restart() {
  if (sampler_) {
    (void)sampler_->Stop();
    sampler_->Start();
  }
}

bool PairPaths::Crosses(int a, int b) const {
  const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
  return active_ && ia < leaf_.size() && ib < leaf_.size() && !leaf_[ia].empty() &&
         !leaf_[ib].empty() && leaf_[ia] != leaf_[ib];
}

void PairPaths::Read() {
  if (!active_) return;
  if (sampler_) backlog_ = sampler_->Stop();
  testbed::SystemShell shell;
  auto c = testbed::ReadSwitchCounters(*layout_, shell);
  if (!c.ok()) {
    std::cerr << "genie: warning: cannot read testbed " << layout_->name()
              << "'s switch counters, so the switch links each probe crossed stay unknown: "
              << c.status().message() << "\n";
    active_ = false;
    return;
  }
  previous_ = std::move(last_);
  last_ = std::move(*c);
  if (sampler_) sampler_->Start();
}

void PairPaths::WithinLeaf(int a, int b) {
  const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
  if (!active_ || ia >= leaf_.size() || ib >= leaf_.size() || leaf_[ia].empty() ||
      leaf_[ia] != leaf_[ib]) {
    return;
  }
  paths_.push_back({a, b, {}});
  paths_.push_back({b, a, {}});
}

void PairPaths::Attribute(int a, int b) {
  if (!active_ || !previous_ || !last_ || !Crosses(a, b)) return;
  const testbed::Counters delta = testbed::Delta(*previous_, *last_);
  Direction(a, b, delta);
  Direction(b, a, delta);
}

void PairPaths::Direction(int from, int to, const testbed::Counters& delta) {
  const std::string& up_leaf = leaf_[static_cast<size_t>(from)];
  const std::string& down_leaf = leaf_[static_cast<size_t>(to)];
  struct End {
    const testbed::Link* link;
    const testbed::InterfaceCounters* counters;
    double queued;  // mean bytes in its queue meanwhile
  };
  auto queued = [&](const testbed::LinkEnd& e) {
    for (size_t i = 0; i < ends_.size() && i < backlog_.size(); ++i)
      if (ends_[i].netns == e.netns && ends_[i].ifname == e.ifname) return backlog_[i];
    return 0.0;
  };
  // Leaf-spine links have the leaf as a, the spine as b (layout.h).
  std::vector<End> up, down;
  double up_bytes = 0, down_bytes = 0;
  for (const auto& l : layout_->links) {
    if (l.a.node == up_leaf) {
      const auto* c = delta.Find(l.a.node, l.a.ifname);
      if (c != nullptr && l.b.node.rfind('s', 0) == 0) {
        up.push_back({&l, c, queued(l.a)});
        up_bytes += static_cast<double>(c->tx_bytes);
      }
    }
    if (l.a.node == down_leaf) {
      const auto* c = delta.Find(l.b.node, l.b.ifname);
      if (c != nullptr) {
        down.push_back({&l, c, queued(l.b)});
        down_bytes += static_cast<double>(c->tx_bytes);
      }
    }
  }
  if (up_bytes < kMinBytes || down_bytes < kMinBytes) return;  // no trace: unknown
  report::TransferPath p{from, to, {}};
  for (const auto& e : up) {
    const double share = static_cast<double>(e.counters->tx_bytes) / up_bytes;
    if (share < kMinShare) continue;
    p.crossings.push_back({e.link->id, e.link->a.node, e.link->b.node, share, e.queued});
  }
  for (const auto& e : down) {
    const double share = static_cast<double>(e.counters->tx_bytes) / down_bytes;
    if (share < kMinShare) continue;
    p.crossings.push_back({e.link->id, e.link->b.node, e.link->a.node, share, e.queued});
  }
  paths_.push_back(std::move(p));
}

}  // namespace genie::driver
