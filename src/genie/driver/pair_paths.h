// Pair paths: which switch-to-switch links each direction between two ranks crossed on a
// leaf-spine `genie testbed`, learnt from the switches' own counters while that pair alone
// sent — whatever the ECMP hash picked (l3 or l4, one connection or several, a spine taken
// out of the route), since it reads where the bytes went instead of predicting it. Rank 0
// reads every leaf-spine link end's bytes sent before and after each probe of a pair that
// crosses leaves, and samples their queues while it runs (testbed/backlog_sampler.h); the
// bytes that left the sender's leaf by spine s (and reached the receiver's leaf from it) are
// that direction's path, and the mean queue of those ends says which of them held it
// (report/path_blame.h judges them). `genie doctor` and `genie run --localize` use it. Rank
// 0's loop thread; reading the counters runs `ip` and `tc`, sampling enters the switches'
// namespaces (root on the testbed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/report/doctor_findings.h"
#include "genie/testbed/backlog_sampler.h"
#include "genie/testbed/counters.h"
#include "genie/testbed/layout.h"

namespace genie::driver {

class PairPaths {
 public:
  // `layout`: the testbed; `hosts`: each rank's host label (GENIE_HOST: h3). Inactive unless a
  // leaf-spine whose hosts the labels name.
  PairPaths(const testbed::Layout* layout, const std::vector<std::string>& hosts);
  bool active() const { return active_; }
  // Whether ranks a and b sit on different leaves (their traffic crosses switch links).
  bool Crosses(int a, int b) const;
  // Reads the counters: the end of the last probe and the start of the next. Nothing may send
  // across the fabric meanwhile. A failed read (not root, the testbed gone) deactivates it,
  // with a warning once.
  void Read();
  // Starts the next probe's queue sampling afresh, without reading (after a pair within a leaf).
  void Restart();
  // After Read() ended pair (a, b)'s probe, both directions' paths from the two last reads.
  void Attribute(int a, int b);
  // Pair (a, b) within one leaf: both directions cross no switch link (no reading needed).
  void WithinLeaf(int a, int b);
  const std::vector<report::TransferPath>& paths() const { return paths_; }

 private:
  void Direction(int from, int to, const testbed::Counters& delta);

  const testbed::Layout* layout_;
  bool active_ = false;
  std::vector<std::string> leaf_;  // [rank]: its leaf ("l0"), "" when unknown
  std::optional<testbed::Counters> last_, previous_;
  std::vector<testbed::QueueEnd> ends_;               // every leaf-spine link end, a then b
  std::unique_ptr<testbed::BacklogSampler> sampler_;  // null: queues not sampled
  std::vector<double> backlog_;                       // [end]: mean bytes queued, last probe
  std::vector<report::TransferPath> paths_;
};

}  // namespace genie::driver
