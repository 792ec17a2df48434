// Injector: applies faults to a testbed's links and takes them back.
//   rate, queue    the tbf on the sending end's egress (out: the link's first end, in: its
//                  second), changed in place with `tc qdisc replace` (burst kept >= 128 kB)
//   loss           an iptables `statistic` DROP rule in the receiving end's PREROUTING (mangle;
//                  on a bridge port through br_netfilter's physdev match)
//   delay, jitter  an NFQUEUE rule there, and a `genie netdelay` helper in that namespace that
//                  holds each packet (REFERENCE §4: netem does not exist here); --queue-bypass,
//                  so packets flow if the helper dies
//   down, up       the link's second end (switch side) set down/up, so the host keeps its
//                  addresses and routes and sees NO-CARRIER, as with a pulled cable
// ClearAll restores every link to its description (shaping, up), removes every rule and stops
// every helper in the testbed's namespaces, whoever made them. Timed faults (down for 2 s,
// flapping) are expanded by Expand() into actions for a scheduler (fault_runner.h) or the CLI.
// Not thread-safe: one owner.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "genie/testbed/fault.h"
#include "genie/testbed/layout.h"
#include "genie/testbed/shell.h"

namespace genie::testbed {

// One step of a fault: apply it or take it back, `offset` after the fault is triggered.
struct FaultAction {
  TimeNs offset = 0;
  Fault fault;
  bool undo = false;
};

// down for 2s -> [0: down, 2s: undo]; flap 3 x 1s -> down/up every half period; a fault with
// `duration` -> apply, then undo after it. Sorted by offset.
std::vector<FaultAction> Expand(const Fault& fault);

class Injector {
 public:
  // `genie_binary` runs the delay helper (`genie netdelay`); default: this process's binary.
  Injector(Layout layout, Shell& shell, std::string genie_binary = "");

  // Checks the link exists (errors list the links there are).
  Status Check(const Fault& fault) const;
  Status Apply(const Fault& fault);
  Status Undo(const Fault& fault);
  Status Do(const FaultAction& action) { return action.undo ? Undo(action.fault) : Apply(action.fault); }
  // Everything back as described; reports the first failure but tries every step.
  Status ClearAll();

  const Layout& layout() const { return layout_; }

 private:
  struct Shaping {
    uint64_t rate_bps = 0;
    Bytes queue_bytes = 0;
  };
  // The ends a direction's packets leave from (egress) and arrive at (ingress rules).
  std::vector<const LinkEnd*> Senders(const Link& link, Direction d) const;
  std::vector<const LinkEnd*> Receivers(const Link& link, Direction d) const;
  Status Set(const Fault& fault, bool on);  // Apply (on) or Undo
  Status Shape(const Link& link, const LinkEnd& end, Shaping s);
  Status SetLink(const Link& link, bool up);  // its second (switch-side) end
  Status SetFrames(const LinkEnd& end, bool frames);  // packets leave `end` in 2-frame pieces
  Status Rule(const Link& link, const LinkEnd& at, const Fault& f, bool add);
  int QueueNumber(const Link& link, const LinkEnd& at) const;
  Status StartDelayHelper(const LinkEnd& at, int queue, const Fault& f);
  void StopDelayHelper(const LinkEnd& at, int queue);

  Layout layout_;
  Shell& shell_;
  std::string genie_;
  std::map<std::string, Shaping> shaping_;  // by "netns/ifname": what each egress is set to
  std::map<std::string, int> helpers_;      // by "netns/queue": pid of its delay helper
};

}  // namespace genie::testbed
