// The watchdog's rule on plain numbers: a message that moves slowly (its bytes counted as they
// move, before it completes) is progress however long it lasts; nothing moving but heartbeats
// is not.
#include "genie/driver/watchdog.h"

#include <gtest/gtest.h>

namespace genie::driver {
namespace {

constexpr TimeNs kTimeout = kNsPerSec;

TEST(ProgressMeter, LimitIsThePeerTimeoutPlusUpToTwoSeconds) {
  EXPECT_EQ(ProgressMeter(kTimeout).limit(), 2 * kNsPerSec);
  EXPECT_EQ(ProgressMeter(30 * kNsPerSec).limit(), 32 * kNsPerSec);
}

// One 2-rank message lasting 5x the peer timeout: its payload moves a little each second and
// completes only at the end. The counters a rank holds meanwhile are what the watchdog reads.
TEST(ProgressMeter, AMessageLastingFiveTimesThePeerTimeoutIsProgressWhileItsBytesMove) {
  ProgressMeter meter(kTimeout);
  net::PeerCounters c;
  meter.Start(0, WireBytes(c));
  const uint64_t message = 5 * 37'500'000;  // 5 s at 300 Mbit/s
  for (int s = 1; s <= 5; ++s) {
    c.wire_bytes_sent += message / 5;  // partial: the message is not complete before s = 5
    if (s == 5) {
      c.bytes_sent = message;
      c.messages_sent = 1;
    }
    const TimeNs idle = meter.Idle(s * kNsPerSec, WireBytes(c), /*last_op=*/0);
    EXPECT_EQ(idle, 0) << "at " << s << " s";
    EXPECT_LE(idle, meter.limit());
  }
}

TEST(ProgressMeter, NothingMovingIsIdleFromTheLastByteOrOp) {
  ProgressMeter meter(kTimeout);
  meter.Start(0, 100);
  EXPECT_EQ(meter.Idle(kNsPerSec, 200, 0), 0);             // bytes moved
  EXPECT_EQ(meter.Idle(2 * kNsPerSec, 200, 0), kNsPerSec);  // nothing since
  EXPECT_EQ(meter.Idle(3 * kNsPerSec, 200, 2500 * kNsPerMs), 500 * kNsPerMs);  // an op
  EXPECT_GT(meter.Idle(5 * kNsPerSec, 200, 2500 * kNsPerMs), meter.limit());
}

// Heartbeats and other control frames are not in the wire counters (a rank waiting forever
// still hears them), and whole-message counters alone do not move during a message.
TEST(ProgressMeter, ReadsThePartialCountersNotTheCompletedOnes) {
  net::PeerCounters c;
  c.bytes_sent = 1000;
  c.bytes_received = 2000;
  EXPECT_EQ(WireBytes(c), 0u);
  c.wire_bytes_sent = 3;
  c.wire_bytes_received = 4;
  EXPECT_EQ(WireBytes(c), 7u);
}

}  // namespace
}  // namespace genie::driver
