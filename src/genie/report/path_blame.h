// Path blame: which switch-to-switch link explains the slow transfers of a scan whose paths are
// known (DoctorScan::paths: on a leaf-spine testbed, the links each direction crossed, learnt
// from the switches' counters while its pair was probed alone, whatever the ECMP hashing).
// Every measured direction crosses its sender's transmit side, its receiver's receive side and
// the switch links on its path. A part that a healthy direction crossed is cleared; the slow
// directions are then covered by the fewest remaining parts (greedily, the part covering most
// first). A part that covers a set of slow directions no other part covers as well is named;
// parts that cover exactly the same set cannot be told apart by rates, so the link whose queue
// held them (Crossing::held, its mean backlog meanwhile) is named when one clearly did, and otherwise
// every candidate is named ("l0 → s1 or h3's transmit side"). Host sides alone are left to the
// host rules (doctor_findings.h); what a link or a choice including one covers is explained,
// and counts against no host. Pure; any thread.
#pragma once

#include <functional>
#include <vector>

#include "genie/report/doctor_findings.h"

namespace genie::report {

struct PathVerdict {
  std::vector<Finding> findings;            // kSlowUplink and kSlowPath, in the order found
  std::vector<std::vector<bool>> explained;  // [from][to]: a slow direction a finding covers
};

// `slow(a, b)`: the doctor's judgement of direction a -> b (measured and slow, against its
// peers); `slow_fraction`: its threshold (DoctorThresholds::slow), with which a direction through
// a link end whose transfers are slow as a whole is also judged against the transfers off that
// end; `reference`: the median transfer, for the sentences.
PathVerdict BlamePaths(const DoctorScan& scan, const std::function<bool(int, int)>& slow,
                       double slow_fraction, double reference);

}  // namespace genie::report
