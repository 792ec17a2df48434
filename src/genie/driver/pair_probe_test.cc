// TCP segment counters as the pair probes read them: loss is what was resent less what the
// receiver reported it already had.
#include "genie/driver/pair_probe.h"

#include <gtest/gtest.h>

namespace genie::driver {
namespace {

TEST(TcpSegments, ResentLeavesOutWhatTheReceiverAlreadyHad) {
  EXPECT_EQ((TcpSegments{1000, 12, 0}).Resent(), 12);   // all needed: a lossy link
  EXPECT_EQ((TcpSegments{1000, 12, 12}).Resent(), 0);   // all reported duplicates: reordering
  EXPECT_EQ((TcpSegments{1000, 12, 5}).Resent(), 7);
  EXPECT_EQ((TcpSegments{1000, 3, 5}).Resent(), 0);     // D-SACKs for earlier segments
}

TEST(TcpSegments, ReadsThisNamespacesCounters) {
  const TcpSegments a = ReadTcpSegments();
  EXPECT_GE(a.out, 0);
  EXPECT_GE(a.retrans, 0);
  EXPECT_GE(a.spurious, 0);
  const TcpSegments b = ReadTcpSegments();
  EXPECT_GE(b.out, a.out);  // cumulative
}

}  // namespace
}  // namespace genie::driver
